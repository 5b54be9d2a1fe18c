// Worker thread of the backup pool: reads, chunks, hashes, compresses, encrypts and verifies.
import { hashID, zeroID } from '../ids/id.ts';
import { parentPort } from 'node:worker_threads';
import { parsePolynomial, type Polynomial } from '../chunker/polynomial.ts';
import { Chunker } from '../chunker/chunker.ts';
import { openVerified, prepareBlob } from '../pack/prepare.ts';
import { fileChunks, type FileChunk } from './file-chunks.ts';
import type { BlockChunk } from '../blocks/changed-chunks.ts';
import type { BlockPlan } from '../blocks/plan.ts';
import { readBlocks } from '../blocks/read-blocks.ts';
import { appendFileSync, type ReadBuffer } from './open-source.ts';
import { unpackPaths, type PackedPaths } from './packed-paths.ts';
import { sealSmallBlobs } from './small-seal.ts';
import type { FromWorker, ToWorker, WorkerInit } from './worker-protocol.ts';
import { threadCpu } from './thread-growth.ts';
import { transferList } from './transfer.ts';
import { allocated } from '../memory/collect.ts';

/** from the pool's first message, which comes before any job (a thread may start before the key is known) */
let init: WorkerInit;
let pol: Polynomial;
const port = parentPort!;
/** answers awaited from the main thread; a canceled job's are settled with `false` */
const waiting = new Map<string, (need: boolean | boolean[]) => void>();
let nextAsk = 0;
/** idle chunkers; a worker runs a few files at once (their reads overlap), each needs its own */
const chunkers: Chunker[] = [];
const canceled = new Set<number>();
/** idle read buffers of small-file batches: a batch is at most about 1 MiB, so one rarely has to grow */
const readBuffers: Buffer[] = [];
const readBufferSize = (1 << 20) + (64 << 10);

function post(msg: FromWorker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(msg, transfer);
}

function ask<T extends boolean | boolean[]>(
  job: number,
  send: (ask: number) => FromWorker,
  transfer: ArrayBuffer[] = [],
): Promise<T | false> {
  const n = nextAsk++;
  return new Promise((resolve) => {
    waiting.set(`${job}:${n}`, resolve as (need: boolean | boolean[]) => void);
    post(send(n), transfer);
  });
}

async function backupFile(job: number, path: Uint8Array, blocks: BlockPlan | undefined): Promise<void> {
  const content = { ids: [] as string[], size: 0 };
  const chunker = chunkers.pop() ?? new Chunker(pol);
  let bytesRead: number | undefined;
  try {
    if (!blocks) await storeChunks(job, fileChunks(path, chunker), content);
    else bytesRead = await readBlocks(path, blocks, (chunks) => storeChunks(job, chunks(chunker), content));
  } finally {
    chunkers.push(chunker);
  }
  post({ op: 'fileDone', job, content: content.ids, size: content.size, bytesRead });
}

async function storeChunks(
  job: number,
  chunks: AsyncIterable<FileChunk | BlockChunk>,
  content: { ids: string[]; size: number },
): Promise<void> {
  for await (const chunk of chunks) {
    if (canceled.delete(job)) throw canceledError();
    if ('reused' in chunk) {
      content.ids.push(chunk.reused.id);
      content.size += chunk.reused.size;
      // asked all the same, for the progress count; the plan took only blobs the index holds
      const { id, size } = chunk.reused;
      const need = await ask<boolean>(job, (n) => ({ op: 'chunk', job, ask: n, id, length: size }));
      if (need) throw new Error(`the parent's blob ${chunk.reused.id} is no longer in the repository`);
      continue;
    }
    const id = chunk.zero ? zeroID(chunk.data.length) : hashID(chunk.data);
    const length = chunk.data.length;
    content.ids.push(id);
    content.size += length;
    const need = await ask<boolean>(job, (n) => ({ op: 'chunk', job, ask: n, id, length }));
    if (!need) continue;
    const blob = prepareBlob(init.key, 'data', id, chunk.data, init.compression);
    // sealing leaves one blob-sized buffer behind, the read-back (the sealed blob leaves for the main thread)
    allocated(blob.sealed.length);
    await ask<boolean>(job, (n) => ({ op: 'sealed', job, ask: n, blob, length }), transferList([blob.sealed]));
  }
}

/**
 * Small files are read synchronously: a whole file is one short read from a warm cache, and the promise and
 * thread-pool round trips of async file handles cost more than the reads themselves. A batch's files are read one
 * after another into one reused buffer.
 */
async function backupSmallFiles(job: number, packed: PackedPaths): Promise<void> {
  const into: ReadBuffer = { bytes: readBuffers.pop() ?? Buffer.allocUnsafeSlow(readBufferSize), used: 0 };
  try {
    const ends = unpackPaths(packed).map((p) => {
      appendFileSync(p, into);
      return into.used;
    });
    const data = ends.map((end, i) => into.bytes.subarray(i === 0 ? 0 : ends[i - 1], end));
    const files = data.map((d) => ({ id: d.length === 0 ? '' : hashID(d), size: d.length }));
    const need = await ask<boolean[]>(job, (n) => ({ op: 'hashed', job, ask: n, files }));
    if (canceled.delete(job) || need === false) throw canceledError();
    const { sealed, blobs } = sealSmallBlobs(
      init.key,
      init.compression,
      files.flatMap((f, i) => (need[i] ? [{ id: f.id, data: data[i] }] : [])),
    );
    allocated(sealed.length);
    post({ op: 'smallDone', job, files, sealed, blobs, cpu: threadCpu() }, transferList([sealed]));
  } finally {
    // a file that grew past the batch's limit after the walk measured it made a bigger buffer: not worth keeping
    if (into.bytes.length === readBufferSize) readBuffers.push(into.bytes);
  }
}

function canceledError(): Error {
  return Object.assign(new Error('backup canceled'), { name: 'AbortError' });
}

port.on('message', (msg: ToWorker) => {
  switch (msg.op) {
    case 'init':
      init = msg.init;
      pol = parsePolynomial(init.polynomial);
      return;
    case 'answer':
    case 'answerMany': {
      const key = `${msg.job}:${msg.ask}`;
      const resolve = waiting.get(key);
      waiting.delete(key);
      resolve?.(msg.need);
      return;
    }
    case 'cancel':
      canceled.add(msg.job);
      // a file waiting for an answer would never get one now
      for (const [key, resolve] of waiting) {
        if (key.startsWith(`${msg.job}:`)) {
          waiting.delete(key);
          resolve(false);
        }
      }
      return;
    case 'file':
      backupFile(msg.job, msg.path, msg.blocks).catch((err: NodeJS.ErrnoException) =>
        post({ op: 'failed', job: msg.job, message: err.message, code: err.code }),
      );
      return;
    case 'open': {
      const results = msg.blobs.map((b) =>
        openVerified(init.key, msg.bytes.subarray(b.offset, b.offset + b.length), b.uncompressedLength, b.id),
      );
      post({ op: 'opened', job: msg.job, results }, transferList(results.filter((r) => typeof r !== 'string')));
      return;
    }
    case 'small':
      backupSmallFiles(msg.job, msg.paths).catch((err: NodeJS.ErrnoException) =>
        post({ op: 'failed', job: msg.job, message: err.message, code: err.code }),
      );
      return;
  }
});
