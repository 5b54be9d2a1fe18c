// Messages between the backup pool (main thread) and its workers. A worker chunks and hashes a whole file,
// asks the main thread whether each chunk is new (the index lives there), and seals only the new ones.
import type { MasterKey } from '../crypto/key.ts';
import type { PreparedBlob } from '../pack/prepare.ts';
import type { BlobType } from '../pack/blob.ts';

export interface WorkerInit {
  key: MasterKey;
  polynomial: string;
  compression: boolean;
}

export interface BlobInRead {
  id: string;
  offset: number;
  length: number;
  uncompressedLength: number;
}

export type ToWorker =
  | { op: 'file'; job: number; path: Uint8Array }
  | { op: 'prepare'; job: number; blobs: { id: string; type: BlobType; data: Uint8Array }[] }
  | { op: 'answer'; job: number; ask: number; need: boolean }
  /** decrypt, decompress and verify stored blobs read together (restore); offsets are into `bytes` */
  | { op: 'open'; job: number; bytes: Uint8Array; blobs: BlobInRead[] }
  /** stop reading this file at the next chunk */
  | { op: 'cancel'; job: number };

export type FromWorker =
  /** a chunk was found; the worker waits for an `answer` before sealing it */
  | { op: 'chunk'; job: number; ask: number; id: string; length: number }
  /** a sealed chunk, sent only after the main thread said it is needed; acknowledged with an `answer` */
  | { op: 'sealed'; job: number; ask: number; blob: PreparedBlob; length: number }
  | { op: 'fileDone'; job: number; content: string[]; size: number }
  | { op: 'prepared'; job: number; blobs: PreparedBlob[] }
  /** per blob, its plaintext or why it could not be opened */
  | { op: 'opened'; job: number; results: (Uint8Array | string)[] }
  | { op: 'failed'; job: number; message: string; code?: string };
