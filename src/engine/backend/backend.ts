// The storage contract every repository backend fulfils (filesystem, S3, in-memory, and the wrappers).
// Files are immutable once saved and are named by the SHA-256 of their content, except `config`.
// The repository engine speaks only to this interface; nothing below it knows about encryption or packs.

export type FileType = 'config' | 'key' | 'lock' | 'snapshot' | 'index' | 'pack';

export interface Handle {
  type: FileType;
  /** hex id of the file; ignored for `config` */
  name: string;
}

export interface FileInfo {
  name: string;
  size: number;
}

/** S3 Object Lock retention given to every object ferry writes (lock files aside, which must stay removable). */
export interface ObjectLockPolicy {
  /** GOVERNANCE: users with s3:BypassGovernanceRetention may still delete; COMPLIANCE: nobody may, until it ends */
  mode: 'GOVERNANCE' | 'COMPLIANCE';
  /** how long each object is kept from when it is written, or from when its retention is extended */
  retentionMs: number;
}

/** What a backend writing under an object-lock policy offers beyond the contract. */
export interface Retention {
  readonly policy: ObjectLockPolicy;
  /** Extends the object's retention to now + the policy's period when it ends sooner; true when it was extended. */
  extend(h: Handle): Promise<boolean>;
}

export interface Backend {
  /** Where the repository lives, for messages (never contains credentials). */
  readonly location: string;
  /**
   * Prepare a location for a new repository (directories, bucket check), leaving whatever is there. Whether a
   * repository exists is the repository's question: two first backups may race to create one, and the loser must
   * find the winner's, not fail between two checks.
   */
  create(): Promise<void>;
  /**
   * Store a file atomically: readers see either nothing or the whole file.
   * Saving a name that already exists with the same content is success (steps re-run after a crash).
   * `sha256` is the caller's hex SHA-256 of `data`, when it computed one (a file named by its content): a backend
   * whose protocol carries a content hash sends it, for the server to check, rather than hashing `data` again.
   */
  save(h: Handle, data: Uint8Array, signal?: AbortSignal, sha256?: string): Promise<void>;
  /**
   * Read `length` bytes at `offset` (length 0: to the end), into memory that becomes the caller's (a restore frees a
   * pack read as soon as its blobs are opened), never a view of something the backend keeps. May be retried by
   * wrappers, so it is idempotent.
   * A missing file rejects with an error for which `isNotExist` is true.
   */
  load(h: Handle, offset?: number, length?: number, signal?: AbortSignal): Promise<Uint8Array>;
  stat(h: Handle): Promise<FileInfo>;
  /**
   * Removing a missing file is success. A file S3 Object Lock still retains is not removed: the call rejects with a
   * LockedError (errors.ts) saying until when, without trying to delete it.
   */
  remove(h: Handle): Promise<void>;
  list(type: FileType, signal?: AbortSignal): AsyncIterable<FileInfo>;
  isNotExist(err: unknown): boolean;
  close(): Promise<void>;
  /** present when the backend writes objects under an object-lock policy */
  readonly retention?: Retention;
}

/** Errors that retrying cannot fix (wrong credentials, missing bucket) carry this mark. */
export class PermanentError extends Error {
  readonly permanent = true;
}

export function isPermanent(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { permanent?: unknown }).permanent === true;
}

/** restic's layout: one folder per type, packs fanned out under data/ by their first two hex digits. */
export function objectPath(h: Handle): string {
  switch (h.type) {
    case 'config':
      return 'config';
    case 'key':
      return `keys/${h.name}`;
    case 'lock':
      return `locks/${h.name}`;
    case 'snapshot':
      return `snapshots/${h.name}`;
    case 'index':
      return `index/${h.name}`;
    case 'pack':
      return `data/${h.name.slice(0, 2)}/${h.name}`;
  }
}

export const typeFolders: Record<Exclude<FileType, 'config'>, string> = {
  key: 'keys',
  lock: 'locks',
  snapshot: 'snapshots',
  index: 'index',
  pack: 'data',
};
