// A repository: a backend, the master key, the config and the blob index. Everything above this layer (backup,
// restore, prune, check) reads and writes through it; nothing here knows about files or Kubernetes.
import type { Backend, FileType } from '../backend/backend.ts';
import type { MasterKey } from '../crypto/key.ts';
import { newMasterKey } from '../crypto/key.ts';
import { hashID, type ID } from '../ids/id.ts';
import type { KDFParams } from '../crypto/keyfile.ts';
import type { Polynomial } from '../chunker/polynomial.ts';
import { decodeConfig, encodeConfig, newConfig, type RepoConfig } from './config.ts';
import { decodeUnpacked, encodeUnpacked } from './unpacked.ts';
import { addKey, findKey } from './keys.ts';
import { open as openSealed } from '../crypto/seal.ts';
import { NoRepositoryError, RepositoryExistsError, CorruptBlobError, MissingBlobError } from './errors.ts';
import { BlobTable, type BlobLocation } from '../index/table.ts';
import { indexText, readIndexFile } from '../index/index-file.ts';
import { readIndexFast } from '../index/index-fast.ts';
import type { BlobType, PackedBlob } from '../pack/blob.ts';
import { openVerified } from '../pack/prepare.ts';
import { decodeHeader, headerRange } from '../pack/header.ts';
import { PackWriter, type PackWriterOptions } from './pack-writer.ts';
import { TreeCache } from './tree-cache.ts';
import { decodeTree } from '../tree/tree.ts';
import type { TreeNode } from '../tree/node.ts';
import { validateTree } from '../tree/validate.ts';
import { mapConcurrent } from '../concurrency/map.ts';
import { outlived } from '../memory/collect.ts';
import { release } from '../memory/release.ts';

export interface InitOptions {
  polynomial?: Polynomial;
  kdf?: KDFParams;
  /**
   * A master key and repository id chosen by the caller instead of at random. Callers that may race to create the
   * same repository (two first backups of one namespace) pass the same values, so whichever config lands, every
   * racer's key and config agree with it.
   */
  masterKey?: MasterKey;
  id?: string;
}

export type UnpackedType = Extract<FileType, 'snapshot' | 'index' | 'lock'>;

/**
 * Index files fetched at once: enough to hide a remote store's latency behind the reading of one; each waits sealed
 * (zstd compressed, a few MB at most) for its turn.
 */
const indexReads = 4;

export class Repository {
  readonly backend: Backend;
  readonly config: RepoConfig;
  readonly key: MasterKey;
  readonly keyID: string;
  readonly index = new BlobTable();
  /** index files whose contents are in `index` */
  readonly indexFiles = new Set<ID>();
  readonly #trees: TreeCache;
  readonly #dataIndexed = (id: ID): boolean => this.index.has(id, 'data');

  private constructor(backend: Backend, config: RepoConfig, key: MasterKey, keyID: string) {
    this.backend = backend;
    this.config = config;
    this.key = key;
    this.keyID = keyID;
    this.#trees = new TreeCache(backend, this.index);
  }

  static async init(backend: Backend, password: string, opts: InitOptions = {}): Promise<Repository> {
    if (await exists(backend, { type: 'config', name: '' })) throw new RepositoryExistsError(backend.location);
    await backend.create();
    const key = opts.masterKey ?? newMasterKey();
    const keyID = await addKey(backend, key, password, opts.kdf);
    const config = { ...newConfig(opts.polynomial), ...(opts.id ? { id: opts.id } : {}) };
    // the config is sealed but never compressed: its version tells readers how to read everything else
    await backend.save({ type: 'config', name: '' }, encodeUnpacked(key, encodeConfig(config), 1));
    return new Repository(backend, config, key, keyID);
  }

  static async open(backend: Backend, password: string): Promise<Repository> {
    // the config is read while the key derives (a tenth of a second of scrypt), not before it; a missing
    // repository still speaks first, since its missing keys would otherwise read as a wrong password
    const [sealedConfig, opened] = await Promise.allSettled([loadConfig(backend), findKey(backend, password)]);
    if (sealedConfig.status === 'rejected') throw sealedConfig.reason;
    if (opened.status === 'rejected') throw opened.reason;
    const { key, keyID } = opened.value;
    return new Repository(backend, decodeConfig(openSealed(key, sealedConfig.value)), key, keyID);
  }

  addKey(password: string, params?: KDFParams): Promise<string> {
    return addKey(this.backend, this.key, password, params);
  }

  async *list(type: FileType, signal?: AbortSignal): AsyncGenerator<ID> {
    for await (const f of this.backend.list(type, signal)) yield f.name;
  }

  /** Loads an unpacked file, checking that its content still hashes to its name. */
  async loadUnpacked(type: UnpackedType, id: ID, signal?: AbortSignal): Promise<Uint8Array> {
    return this.#openUnpacked(type, id, await this.backend.load({ type, name: id }, 0, 0, signal));
  }

  #openUnpacked(type: UnpackedType, id: ID, sealed: Uint8Array): Uint8Array {
    if (type !== 'lock' && hashID(sealed) !== id)
      throw new Error(`${type} file ${id.slice(0, 8)} is damaged: its content does not match its name`);
    return decodeUnpacked(this.key, sealed, this.config.version);
  }

  /** Seals `plaintext` before returning its promise, so the caller may free or reuse it from then on. */
  async saveUnpacked(type: UnpackedType, plaintext: Uint8Array, signal?: AbortSignal): Promise<ID> {
    const sealed = encodeUnpacked(this.key, plaintext, this.config.version);
    const id = hashID(sealed);
    await this.backend.save({ type, name: id }, sealed, signal, id);
    return id;
  }

  /** Loads every index file not loaded yet, a few at a time. */
  async loadIndex(signal?: AbortSignal): Promise<void> {
    const ids: ID[] = [];
    for await (const id of this.list('index', signal)) if (!this.indexFiles.has(id)) ids.push(id);
    await mapConcurrent(ids, indexReads, async (id) => {
      const length = this.#readIndex(id, await this.backend.load({ type: 'index', name: id }, 0, 0, signal));
      // the plaintext (and the text, when the general reader needed one) are garbage now, in the old generation:
      // left to V8, a million blobs' index files stood at once, their text not yet freed. Counted twice even without
      // a text, so a collection comes every 16 MiB of index: counted once, the fast reader's peak was higher.
      outlived(2 * length);
    });
  }

  /**
   * Decodes and reads one index file in one synchronous stretch. With an await between the two, every file fetched
   * meanwhile was decoded before the first was read, and the index of a million blobs held several plaintexts of
   * tens of megabytes at once. Returns the length of the file's plaintext.
   */
  #readIndex(id: ID, sealed: Uint8Array): number {
    const plain = this.#openUnpacked('index', id, sealed);
    release(sealed);
    // restic's and ferry's own spelling read straight from the bytes; anything else as JSON text
    if (!readIndexFast(plain, (pack, b) => this.index.addRaw(pack, b))) {
      readIndexFile(indexText(plain), id, (pack, b) => this.index.add(pack, b));
    }
    this.indexFiles.add(id);
    const length = plain.length;
    // the table copied what it keeps. Index files of a few megabytes sit under malloc's mmap threshold: left to a
    // collection, several stood in malloc's heap at once, and the heap kept that high mark for the rest of a restore
    // (15-20 MiB of the peak of a restore of a million tiny files)
    release(plain);
    return length;
  }

  /**
   * Reads, decrypts, decompresses and verifies one blob; a mismatch names the pack and the blob. Trees come
   * through a cache of pack ranges (a walk reads many trees of few packs); data blobs are read one by one. A blob
   * stored in several packs is read from the first one indexed, and from the others when that one fails, as restic
   * does; the first failure is the one reported.
   */
  async loadBlob(type: BlobType, id: ID, signal?: AbortSignal): Promise<Uint8Array> {
    const first = this.index.get(id, type);
    if (!first) throw new MissingBlobError(type, id);
    try {
      return await this.#loadAt(first, signal);
    } catch (err) {
      if (signal?.aborted) throw err;
      for (const other of this.index.locations(id, type).slice(1)) {
        try {
          return await this.#loadAt(other, signal);
        } catch {
          // the next copy, if any
        }
      }
      throw err;
    }
  }

  async #loadAt(loc: BlobLocation, signal?: AbortSignal): Promise<Uint8Array> {
    const sealed =
      loc.type === 'tree'
        ? await this.#trees.sealed(loc, signal)
        : await this.backend.load({ type: 'pack', name: loc.pack }, loc.offset, loc.length, signal);
    return this.openPackedBlob(loc.pack, loc, sealed);
  }

  /**
   * A tree, decoded and held to restic's invariants (tree/validate.ts); every error names the tree. `contents`
   * false skips looking up files' data blobs in the index (a backup re-reads a file whose blobs are gone).
   */
  async loadTree(id: ID, signal?: AbortSignal, contents = true): Promise<TreeNode[]> {
    const blob = await this.loadBlob('tree', id, signal);
    let nodes: TreeNode[];
    try {
      nodes = decodeTree(blob);
    } catch (err) {
      throw new Error(`tree ${id} cannot be decoded: ${(err as Error).message}`);
    }
    return validateTree(id, nodes, contents ? this.#dataIndexed : undefined);
  }

  /** `inPlace`: `sealed` is the caller's to give up (see openVerified) */
  openPackedBlob(pack: ID, b: PackedBlob, sealed: Uint8Array, inPlace = false): Uint8Array {
    const plain = openVerified(this.key, sealed, b.uncompressedLength, b.id, inPlace);
    if (typeof plain === 'string') throw new CorruptBlobError(pack, b.id, plain);
    return plain;
  }

  /** Reads a pack's own header (the truth when the index is missing or doubted). */
  async readPackHeader(pack: ID, size?: number, signal?: AbortSignal): Promise<PackedBlob[]> {
    const packSize = size ?? (await this.backend.stat({ type: 'pack', name: pack })).size;
    if (packSize < 4) throw new Error(`pack ${pack} is truncated (${packSize} bytes)`);
    const trailer = await this.backend.load({ type: 'pack', name: pack }, packSize - 4, 4, signal);
    const range = headerRange(packSize, trailer);
    const sealed = await this.backend.load({ type: 'pack', name: pack }, range.offset, range.length, signal);
    return decodeHeader(this.key, sealed, packSize);
  }

  /** A writer of packs and index files; its counters describe what it alone wrote. */
  writer(opts?: PackWriterOptions): PackWriter {
    return new PackWriter(this, opts);
  }

  async close(): Promise<void> {
    await this.backend.close();
  }
}

async function loadConfig(backend: Backend): Promise<Uint8Array> {
  try {
    return await backend.load({ type: 'config', name: '' });
  } catch (err) {
    if (backend.isNotExist(err)) throw new NoRepositoryError(backend.location);
    throw err;
  }
}

async function exists(backend: Backend, h: { type: FileType; name: string }): Promise<boolean> {
  try {
    await backend.stat(h);
    return true;
  } catch (err) {
    if (backend.isNotExist(err)) return false;
    throw err;
  }
}
