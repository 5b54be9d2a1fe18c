// Messages between a restore and its small-file thread: files to write with their metadata, and the metadata of
// folders whose entries are all written. A batch is one buffer, transferred rather than cloned (cloning an array of
// job objects cost more per file than writing it, and cloning a Buffer copies its whole backing store, an 8 KiB pool
// slab for a short path). Each file is a fixed header followed by its path (relative to the restore's target folder,
// whose descriptor the batch carries), its blob's id (sealed files only) and its content:
//   u32 path length, u32 content length, f64 size, u32 uid, u32 gid, u32 mode,
//   u8 kind (0: a file to write, 1: an existing folder's metadata only, 2: a file whose content is a sealed blob),
//   u32 the blob's uncompressed length (0: stored raw; sealed files only, else 0),
//   32 bytes: atime and mtime as the two struct timespec futimens takes (exact to the nanosecond)
import type { MasterKey } from '../crypto/key.ts';

export interface SmallFile {
  /**
   * 'metadata': the path exists (a folder); only its owner, mode and times are set. 'sealed': `data` is the file's
   * one blob as the pack holds it, which the thread opens and checks against `blob` before it creates the file
   */
  kind: 'file' | 'metadata' | 'sealed';
  /** relative to the target folder */
  path: Uint8Array;
  data: Uint8Array;
  /** sealed files only */
  blob?: SealedBlob;
  /** the file's size: longer than its content when it ends in a hole */
  size: number;
  uid: number;
  gid: number;
  mode: number;
  /** atime and mtime, see nodeTimes */
  times: Uint8Array;
}

export interface SealedBlob {
  /** the plaintext's SHA-256, 32 bytes */
  id: Uint8Array;
  /** 0 when the blob is stored uncompressed */
  uncompressedLength: number;
}

export interface SmallFileBatch {
  op: 'batch';
  id: number;
  /** the descriptor of the target folder the paths are relative to */
  root: number;
  bytes: Uint8Array<ArrayBuffer>;
}

/**
 * The blobs of a pack read to open (decrypt, decompress, verify) while the thread has no small files to write:
 * `bytes` is the read, moved to the thread, which decrypts over it; each blob's offset is into it.
 */
export interface OpenRequest {
  op: 'open';
  id: number;
  bytes: Uint8Array<ArrayBuffer>;
  blobs: { id: string; offset: number; length: number; uncompressedLength: number }[];
}

/** The first message a small-file thread gets carries the key that opens sealed files; batches and reads follow. */
export type ToSmallFileThread = { op: 'init'; key: MasterKey } | SmallFileBatch | OpenRequest;

/**
 * Each opened blob's plaintext, or why it could not be trusted. A plaintext is either a view of the read (decrypted
 * in place; the read moves back) or a buffer of its own.
 */
export interface OpenReply {
  op: 'opened';
  id: number;
  results: (Uint8Array | string)[];
}

/**
 * `blob`: a sealed file's blob did not open or match its id (and no file was made); `content`: the file could not be
 * written (and is gone); `metadata`: it was, but these steps failed
 */
export interface SmallFileResult {
  blob?: string;
  content?: string;
  metadata?: string;
}

/**
 * The files of a batch before `done` are settled (a batch is answered in parts as the thread goes, so the restore can
 * hand over more files while it writes the rest). Only the files that failed are named (by their place in the
 * batch): most parts have none.
 */
export interface SmallFileReply {
  op: 'written';
  id: number;
  done: number;
  failures: [number, SmallFileResult][];
}

const timesLength = 32;
const timesAt = 33;
const headerLength = timesAt + timesLength;
const idLength = 32;
const kinds = ['file', 'metadata', 'sealed'] as const;

export function encodeBatch(files: readonly SmallFile[]): Uint8Array<ArrayBuffer> {
  let length = 0;
  for (const f of files) length += headerLength + f.path.length + (f.kind === 'sealed' ? idLength : 0) + f.data.length;
  const bytes = Buffer.from(new ArrayBuffer(length));
  const view = new DataView(bytes.buffer);
  let at = 0;
  for (const f of files) {
    view.setUint32(at, f.path.length, true);
    view.setUint32(at + 4, f.data.length, true);
    view.setFloat64(at + 8, f.size, true);
    view.setUint32(at + 16, f.uid, true);
    view.setUint32(at + 20, f.gid, true);
    view.setUint32(at + 24, f.mode, true);
    view.setUint8(at + 28, kinds.indexOf(f.kind));
    if (f.kind === 'sealed' && f.blob?.id.length !== idLength) throw new Error('a sealed file needs its blob id');
    if (f.times.length !== timesLength) throw new Error('a file needs its two times');
    view.setUint32(at + 29, f.blob?.uncompressedLength ?? 0, true);
    bytes.set(f.times, at + timesAt);
    at += headerLength;
    bytes.set(f.path, at);
    at += f.path.length;
    if (f.kind === 'sealed') {
      bytes.set(f.blob!.id, at);
      at += idLength;
    }
    bytes.set(f.data, at);
    at += f.data.length;
  }
  return new Uint8Array(bytes.buffer);
}

/** The files of a batch; paths and contents are views of `bytes`. */
export function decodeBatch(bytes: Uint8Array): SmallFile[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const files: SmallFile[] = [];
  let at = 0;
  while (at < buf.length) {
    const pathLength = view.getUint32(at, true);
    const dataLength = view.getUint32(at + 4, true);
    const kind = kinds[view.getUint8(at + 28)];
    const pathEnd = at + headerLength + pathLength;
    const path = buf.subarray(at + headerLength, pathEnd);
    const dataStart = kind === 'sealed' ? pathEnd + idLength : pathEnd;
    const dataEnd = dataStart + dataLength;
    const file: SmallFile = {
      kind,
      path,
      data: buf.subarray(dataStart, dataEnd),
      size: view.getFloat64(at + 8, true),
      uid: view.getUint32(at + 16, true),
      gid: view.getUint32(at + 20, true),
      mode: view.getUint32(at + 24, true),
      times: buf.subarray(at + timesAt, at + timesAt + timesLength),
    };
    if (kind === 'sealed')
      file.blob = { id: buf.subarray(pathEnd, dataStart), uncompressedLength: view.getUint32(at + 29, true) };
    files.push(file);
    at = dataEnd;
  }
  return files;
}
