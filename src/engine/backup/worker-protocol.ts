// Messages between the backup pool (main thread) and its workers. A worker chunks and hashes a whole file,
// asks the main thread whether each chunk is new (the index lives there), and seals only the new ones, or, told to
// set a new chunk aside, hands it over for another worker to seal (a single large file then keeps two cores busy).
// Small files travel in batches: the worker reads and hashes a batch, asks once which of its blobs are new, and
// seals those.
import type { MasterKey } from '../crypto/key.ts';
import type { PreparedBlob } from '../pack/prepare.ts';
import type { PackedPaths } from './packed-paths.ts';
import type { BlockPlan } from '../blocks/plan.ts';

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

/** One small file of a batch as read: its single blob's id ('' when empty) and its size. */
export interface SmallFileRead {
  id: string;
  size: number;
}

/**
 * A new blob of a small-file batch. The batch's sealed blobs lie one after another in one buffer, in this order;
 * `sealedLength` is this one's share of it, `length` its plaintext length (for the writer's statistics).
 */
export interface SealedSmall {
  id: string;
  sealedLength: number;
  uncompressedLength: number;
  length: number;
}

export type ToWorker =
  /** the first message, before any job */
  | { op: 'init'; init: WorkerInit }
  /** with `blocks`, a device read by that plan (changed or allocated ranges only) */
  | { op: 'file'; job: number; path: Uint8Array; blocks?: BlockPlan }
  /** read, hash and (once told which are new) seal whole small files, each stored as one blob */
  | { op: 'small'; job: number; paths: PackedPaths }
  /** `aside`: the chunk is new, and goes back raw for another worker to seal */
  | { op: 'answer'; job: number; ask: number; need: boolean; aside?: boolean }
  /** seal one new chunk set aside by another worker's file; answered with `sealedAside` */
  | { op: 'seal'; job: number; id: string; data: Uint8Array }
  /** which blobs of a `hashed` batch are new, in the batch's order */
  | { op: 'answerMany'; job: number; ask: number; need: boolean[] }
  /** decrypt, decompress and verify stored blobs read together (restore); offsets are into `bytes` */
  | { op: 'open'; job: number; bytes: Uint8Array; blobs: BlobInRead[] }
  /** stop reading this file at the next chunk */
  | { op: 'cancel'; job: number };

/** A thread's CPU time so far and when it was read, both in milliseconds, read together by the thread itself. */
export interface ThreadCpu {
  usedMs: number;
  atMs: number;
}

export type FromWorker =
  /** a chunk was found; the worker waits for an `answer` before sealing it */
  | { op: 'chunk'; job: number; ask: number; id: string; length: number }
  /** a sealed chunk, sent only after the main thread said it is needed; acknowledged with an `answer` */
  | { op: 'sealed'; job: number; ask: number; blob: PreparedBlob; length: number }
  /** a new chunk set aside, its bytes the worker's no longer; not acknowledged */
  | { op: 'raw'; job: number; id: string; data: Uint8Array }
  /** a `seal` job's blob; the job ends here */
  | { op: 'sealedAside'; job: number; blob: PreparedBlob; length: number }
  /** `bytesRead` only for a block plan: what was really read of the device */
  | { op: 'fileDone'; job: number; content: string[]; size: number; bytesRead?: number }
  /** a small-file batch read and hashed; the worker waits for an `answerMany` before sealing the new blobs */
  | { op: 'hashed'; job: number; ask: number; files: SmallFileRead[] }
  /** the batch's new blobs, sealed side by side in `sealed`; the job ends here */
  | { op: 'smallDone'; job: number; files: SmallFileRead[]; sealed: Uint8Array; blobs: SealedSmall[]; cpu: ThreadCpu }
  /** per blob, its plaintext or why it could not be opened */
  | { op: 'opened'; job: number; results: (Uint8Array | string)[] }
  | { op: 'failed'; job: number; message: string; code?: string };
