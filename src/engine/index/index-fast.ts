// Index files as restic and ferry spell them, read straight from their bytes. Both write compact JSON with the
// fields in one order (packs of `id` and `blobs`; blobs of `id`, `type`, `offset`, `length` and, when compressed,
// `uncompressed_length`), and reading that spelling byte by byte, with ids decoded from hex into place, spares the
// general reader's text, strings and objects per blob, in a fraction of its time. Anything else, even valid JSON
// spelled differently, is left to the general reader (index-file.ts), which also gives the errors.
import type { ID } from '../ids/id.ts';
import type { RawBlob } from '../pack/blob.ts';

/** the value of a lowercase hex digit, -1 for any other byte (upper case is the general reader's) */
const hexValue = new Int8Array(256).fill(-1);
for (let d = 0; d < 10; d++) hexValue[0x30 + d] = d;
for (let d = 0; d < 6; d++) hexValue[0x61 + d] = 10 + d;

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const supersedesHead = ascii('{"supersedes":[');
const packsAfterSupersedes = ascii(',"packs":[');
const packsHead = ascii('{"packs":[');
const idHead = ascii('{"id":"');
const blobsHead = ascii('","blobs":[');
const typeHead = ascii('","type":"');
const dataType = ascii('data"');
const treeType = ascii('tree"');
const offsetHead = ascii(',"offset":');
const lengthHead = ascii(',"length":');
const uncompressedHead = ascii(',"uncompressed_length":');

const comma = 0x2c;
const close = 0x5d;
const endObject = 0x7d;
const quote = 0x22;
/** digits of the longest number read here: every 15-digit number is a safe integer */
const maxDigits = 15;

/**
 * Reads an index file's plaintext if it is spelled as restic and ferry write index files, calling `onBlob` for
 * each blob with one RawBlob refilled each time (its id at `at` in `ids`). Returns false at the first byte it does
 * not expect, perhaps having called `onBlob` for the blobs before it, each exactly as the general reader reads it:
 * the caller then reads the file with the general reader, and a table does not add a location it already has.
 */
export function readIndexFast(bytes: Uint8Array, onBlob: (pack: ID, b: RawBlob) => void): boolean {
  return new FastReader(bytes).file(onBlob);
}

class FastReader {
  readonly #b: Uint8Array;
  #at = 0;
  readonly #raw: RawBlob = { ids: Buffer.alloc(32), at: 0, type: 'data', offset: 0, length: 0, uncompressedLength: 0 };

  constructor(bytes: Uint8Array) {
    this.#b = bytes;
  }

  file(onBlob: (pack: ID, b: RawBlob) => void): boolean {
    if (this.#literal(supersedesHead)) {
      // what a file supersedes matters to prune, which reads the file in full; loading needs only the packs
      if (!this.#list(() => this.#quotedID()) || !this.#literal(packsAfterSupersedes)) return false;
    } else if (!this.#literal(packsHead)) return false;
    if (!this.#list(() => this.#pack(onBlob)) || this.#b[this.#at++] !== endObject) return false;
    // restic ends the file with a newline
    while (this.#at < this.#b.length && isSpace(this.#b[this.#at])) this.#at++;
    return this.#at === this.#b.length;
  }

  #pack(onBlob: (pack: ID, b: RawBlob) => void): boolean {
    if (!this.#literal(idHead)) return false;
    const start = this.#at;
    if (!this.#hex(undefined)) return false;
    // a string of its own, not a slice of a bigger one: the table keeps pack ids for its whole life
    const pack = Buffer.from(this.#b.buffer, this.#b.byteOffset + start, 64).toString('latin1');
    if (!this.#literal(blobsHead)) return false;
    return this.#list(() => this.#blob(pack, onBlob)) && this.#b[this.#at++] === endObject;
  }

  #blob(pack: ID, onBlob: (pack: ID, b: RawBlob) => void): boolean {
    const raw = this.#raw;
    if (!this.#literal(idHead) || !this.#hex(raw.ids) || !this.#literal(typeHead)) return false;
    if (this.#literal(dataType)) raw.type = 'data';
    else if (this.#literal(treeType)) raw.type = 'tree';
    else return false;
    if (!this.#literal(offsetHead) || (raw.offset = this.#number()) < 0) return false;
    if (!this.#literal(lengthHead) || (raw.length = this.#number()) < 0) return false;
    raw.uncompressedLength = 0;
    if (this.#literal(uncompressedHead) && (raw.uncompressedLength = this.#number()) < 0) return false;
    if (this.#b[this.#at++] !== endObject) return false;
    onBlob(pack, raw);
    return true;
  }

  /** `"` and 64 lowercase hex digits and `"`, as a pack or blob id in a list. */
  #quotedID(): boolean {
    return this.#b[this.#at++] === quote && this.#hex(undefined) && this.#b[this.#at++] === quote;
  }

  /** 64 lowercase hex digits, decoded into `out` when given. */
  #hex(out: Uint8Array | undefined): boolean {
    const b = this.#b;
    const at = this.#at;
    if (at + 64 > b.length) return false;
    for (let i = 0; i < 32; i++) {
      const hi = hexValue[b[at + 2 * i]];
      const lo = hexValue[b[at + 2 * i + 1]];
      if ((hi | lo) < 0) return false;
      if (out !== undefined) out[i] = (hi << 4) | lo;
    }
    this.#at = at + 64;
    return true;
  }

  /** An unsigned integer as JSON writes it (no sign, no leading zero), or -1. */
  #number(): number {
    const b = this.#b;
    const start = this.#at;
    let n = 0;
    let at = start;
    for (; at < b.length && at - start <= maxDigits; at++) {
      const d = b[at] - 0x30;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    const digits = at - start;
    if (digits === 0 || digits > maxDigits || (digits > 1 && b[start] === 0x30)) return -1;
    this.#at = at;
    return n;
  }

  /** `item (, item)* ]` or `]`, the `[` having been read. */
  #list(item: () => boolean): boolean {
    if (this.#b[this.#at] === close) {
      this.#at++;
      return true;
    }
    for (;;) {
      if (!item()) return false;
      const c = this.#b[this.#at++];
      if (c === close) return true;
      if (c !== comma) return false;
    }
  }

  #literal(lit: Uint8Array): boolean {
    const b = this.#b;
    const at = this.#at;
    if (at + lit.length > b.length) return false;
    for (let i = 0; i < lit.length; i++) if (b[at + i] !== lit[i]) return false;
    this.#at = at + lit.length;
    return true;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
