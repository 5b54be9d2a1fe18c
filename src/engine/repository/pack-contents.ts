// The blobs of a pack being written, in the order they sit in it. A pack of tiny files holds over 100k blobs: an
// object per blob plus a string key to find it took about 250 bytes each, for up to four packs at once (the open data
// and tree packs and two uploading), which was most of the heap a backup of a million small files peaked at. A blob
// table keeps about 57 bytes a blob.
import type { ID } from '../ids/id.ts';
import { BlobTable } from '../index/table.ts';
import type { BlobList, BlobType, PackedBlob, RawBlob } from '../pack/blob.ts';

export class PackContents implements BlobList {
  // one table per pack: the pack's own id is not known until it is complete, so every entry names the same ''
  readonly #table = new BlobTable();

  get length(): number {
    return this.#table.size;
  }

  has(id: ID, type: BlobType): boolean {
    return this.#table.has(id, type);
  }

  /** False when the pack already holds the blob (it is then not to be appended again). */
  add(b: PackedBlob): boolean {
    // a table keeps every location of a blob; a pack holds one
    return !this.#table.has(b.id, b.type) && this.#table.add('', b);
  }

  forEachBlob(fn: (b: RawBlob) => void): void {
    this.#table.forEachBlob(fn);
  }
}
