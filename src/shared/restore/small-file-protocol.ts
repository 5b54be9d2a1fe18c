// Messages between a restore and its small-file thread. A batch's paths and contents travel in one buffer that is
// transferred, not cloned: cloning a Buffer copies its whole backing store (an 8 KiB pool slab for a short path).

/** One file; its path and then its content lie in the batch's bytes from `start` on. */
export interface SmallFileJob {
  start: number;
  pathLength: number;
  dataLength: number;
  /** the file's size: longer than its content when it ends in a hole */
  size: number;
  uid: number;
  gid: number;
  mode: number;
  /** seconds, as restoreMetadata passes them (a string keeps times before 1970) */
  atime: string;
  mtime: string;
}

export interface SmallFileBatch {
  id: number;
  bytes: Uint8Array<ArrayBuffer>;
  jobs: SmallFileJob[];
}

/** `content`: the file could not be written (and is gone); `metadata`: it was, but these steps failed */
export interface SmallFileResult {
  content?: string;
  metadata?: string;
}

export interface SmallFileReply {
  id: number;
  results: SmallFileResult[];
}
