// Worker of the backup pool: reads, chunks, hashes, compresses, encrypts and verifies. It serves one message port:
// a worker thread's own (worker-thread.ts), or, for a read too small to be worth starting a thread, one end of a
// channel on the main thread (pool.ts), where the same messages pass without a thread.
import { hashID, zeroID } from '../ids/id.ts';
import type { MessagePort } from 'node:worker_threads';
import { parsePolynomial, type Polynomial } from '../chunker/polynomial.ts';
import { Chunker } from '../chunker/chunker.ts';
import { openVerified, prepareBlob, type PreparedBlob } from '../pack/prepare.ts';
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

const readBufferSize = (1 << 20) + (64 << 10);

/** what an ask resolves with: a chunk's need (or 'aside'), a batch's needs, or false once its job is canceled */
type Answer = boolean | boolean[] | 'aside';

class Service {
  readonly #port: MessagePort;
  /** from the pool's first message, which comes before any job (a thread may start before the key is known) */
  #init!: WorkerInit;
  #pol!: Polynomial;
  /** answers awaited from the main thread; a canceled job's are settled with `false` */
  readonly #waiting = new Map<string, (need: Answer) => void>();
  #nextAsk = 0;
  /** idle chunkers; a worker runs a few files at once (their reads overlap), each needs its own */
  readonly #chunkers: Chunker[] = [];
  readonly #canceled = new Set<number>();
  /** idle read buffers of small-file batches: a batch is at most about 1 MiB, so one rarely has to grow */
  readonly #readBuffers: Buffer[] = [];

  constructor(port: MessagePort) {
    this.#port = port;
    port.on('message', (msg: ToWorker) => this.#onMessage(msg));
  }

  #post(msg: FromWorker, transfer: ArrayBuffer[] = []): void {
    this.#port.postMessage(msg, transfer);
  }

  #ask<T extends Answer>(
    job: number,
    send: (ask: number) => FromWorker,
    transfer: ArrayBuffer[] = [],
  ): Promise<T | false> {
    const n = this.#nextAsk++;
    return new Promise((resolve) => {
      this.#waiting.set(`${job}:${n}`, resolve as (need: Answer) => void);
      this.#post(send(n), transfer);
    });
  }

  async #backupFile(job: number, path: Uint8Array, blocks: BlockPlan | undefined): Promise<void> {
    const content = { ids: [] as string[], size: 0 };
    const chunker = this.#chunkers.pop() ?? new Chunker(this.#pol);
    let bytesRead: number | undefined;
    try {
      if (!blocks) await this.#storeChunks(job, fileChunks(path, chunker), content);
      else bytesRead = await readBlocks(path, blocks, (chunks) => this.#storeChunks(job, chunks(chunker), content));
    } finally {
      this.#chunkers.push(chunker);
    }
    this.#post({ op: 'fileDone', job, content: content.ids, size: content.size, bytesRead });
  }

  #seal(id: string, data: Uint8Array): PreparedBlob {
    const blob = prepareBlob(this.#init.key, 'data', id, data, this.#init.compression);
    // sealing leaves one blob-sized buffer behind, the read-back (the sealed blob leaves for the main thread)
    allocated(blob.sealed.length);
    return blob;
  }

  async #storeChunks(
    job: number,
    chunks: AsyncIterable<FileChunk | BlockChunk>,
    content: { ids: string[]; size: number },
  ): Promise<void> {
    for await (const chunk of chunks) {
      if (this.#canceled.delete(job)) throw canceledError();
      if ('reused' in chunk) {
        content.ids.push(chunk.reused.id);
        content.size += chunk.reused.size;
        // asked all the same, for the progress count; the plan took only blobs the index holds
        const { id, size } = chunk.reused;
        const need = await this.#ask<boolean>(job, (n) => ({ op: 'chunk', job, ask: n, id, length: size }));
        if (need) throw new Error(`the parent's blob ${chunk.reused.id} is no longer in the repository`);
        continue;
      }
      const id = chunk.zero ? zeroID(chunk.data.length) : hashID(chunk.data);
      const length = chunk.data.length;
      content.ids.push(id);
      content.size += length;
      const need = await this.#ask<boolean | 'aside'>(job, (n) => ({ op: 'chunk', job, ask: n, id, length }));
      if (!need) continue;
      if (need === 'aside') {
        // a buffer of its own, moved with the message: the chunk's bytes are the reader's, and reused
        const data = new Uint8Array(chunk.data);
        this.#post({ op: 'raw', job, id, data }, [data.buffer]);
        continue;
      }
      const blob = this.#seal(id, chunk.data);
      await this.#ask<boolean>(job, (n) => ({ op: 'sealed', job, ask: n, blob, length }), transferList([blob.sealed]));
    }
  }

  /**
   * Small files are read synchronously: a whole file is one short read from a warm cache, and the promise and
   * thread-pool round trips of async file handles cost more than the reads themselves. A batch's files are read one
   * after another into one reused buffer.
   */
  async #backupSmallFiles(job: number, packed: PackedPaths): Promise<void> {
    const into: ReadBuffer = { bytes: this.#readBuffers.pop() ?? Buffer.allocUnsafeSlow(readBufferSize), used: 0 };
    try {
      const ends = unpackPaths(packed).map((p) => {
        appendFileSync(p, into);
        return into.used;
      });
      const data = ends.map((end, i) => into.bytes.subarray(i === 0 ? 0 : ends[i - 1], end));
      const files = data.map((d) => ({ id: d.length === 0 ? '' : hashID(d), size: d.length }));
      const need = await this.#ask<boolean[]>(job, (n) => ({ op: 'hashed', job, ask: n, files }));
      if (this.#canceled.delete(job) || need === false) throw canceledError();
      const { sealed, blobs } = sealSmallBlobs(
        this.#init.key,
        this.#init.compression,
        files.flatMap((f, i) => (need[i] ? [{ id: f.id, data: data[i] }] : [])),
      );
      allocated(sealed.length);
      this.#post({ op: 'smallDone', job, files, sealed, blobs, cpu: threadCpu() }, transferList([sealed]));
    } finally {
      // a file that grew past the batch's limit after the walk measured it made a bigger buffer: not worth keeping
      if (into.bytes.length === readBufferSize) this.#readBuffers.push(into.bytes);
    }
  }

  #failed(job: number): (err: NodeJS.ErrnoException) => void {
    return (err) => this.#post({ op: 'failed', job, message: err.message, code: err.code });
  }

  #onMessage(msg: ToWorker): void {
    switch (msg.op) {
      case 'init':
        this.#init = msg.init;
        this.#pol = parsePolynomial(msg.init.polynomial);
        return;
      case 'answer':
      case 'answerMany': {
        const key = `${msg.job}:${msg.ask}`;
        const resolve = this.#waiting.get(key);
        this.#waiting.delete(key);
        resolve?.(msg.op === 'answer' && msg.aside ? 'aside' : msg.need);
        return;
      }
      case 'seal':
        try {
          const blob = this.#seal(msg.id, msg.data);
          this.#post({ op: 'sealedAside', job: msg.job, blob, length: msg.data.length }, transferList([blob.sealed]));
        } catch (err) {
          this.#failed(msg.job)(err as NodeJS.ErrnoException);
        }
        return;
      case 'cancel':
        this.#canceled.add(msg.job);
        // a file waiting for an answer would never get one now
        for (const [key, resolve] of this.#waiting) {
          if (key.startsWith(`${msg.job}:`)) {
            this.#waiting.delete(key);
            resolve(false);
          }
        }
        return;
      case 'file':
        this.#backupFile(msg.job, msg.path, msg.blocks).catch(this.#failed(msg.job));
        return;
      case 'open': {
        const results = msg.blobs.map((b) =>
          openVerified(this.#init.key, msg.bytes.subarray(b.offset, b.offset + b.length), b.uncompressedLength, b.id),
        );
        this.#post({ op: 'opened', job: msg.job, results }, transferList(results.filter((r) => typeof r !== 'string')));
        return;
      }
      case 'small':
        this.#backupSmallFiles(msg.job, msg.paths).catch(this.#failed(msg.job));
        return;
    }
  }
}

function canceledError(): Error {
  return Object.assign(new Error('backup canceled'), { name: 'AbortError' });
}

/** Serves the pool's messages on `port`, in this thread. */
export function serve(port: MessagePort): void {
  new Service(port);
}
