// The main-thread side of the backup workers: hands out whole files, answers "is this chunk new?" from the
// index, and passes sealed blobs to the pack writer (whose back-pressure reaches the workers through the replies).
import type { BlockPlan } from '../blocks/plan.ts';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { hasSpareThread, startThread, startThreadAhead, stopSpareThread } from '../concurrency/thread.ts';
import type { PackWriter } from '../repository/pack-writer.ts';
import type {
  BlobInRead,
  FromWorker,
  SealedSmall,
  SmallFileRead,
  ThreadCpu,
  ToWorker,
  WorkerInit,
} from './worker-protocol.ts';
import { release } from '../memory/release.ts';
import { transferList } from './transfer.ts';
import { packPaths } from './packed-paths.ts';
import type { PreparedBlob } from '../pack/prepare.ts';
import { availableParallelism } from 'node:os';
import { cpuShare, defaultGrowth, threadCpu, worthAnotherThread, type GrowthRule } from './thread-growth.ts';

interface Job {
  worker: PoolWorker;
  resolve(v: unknown): void;
  reject(err: Error): void;
  onBytes?: (n: number) => void;
  /** stops listening for cancellation once the job is over */
  detach?: () => void;
  /** a file's chunks set aside for another worker, until each is in the pack writer */
  aside?: Promise<void>[];
  /** of those, the ones not yet in the pack writer */
  asideOpen?: number;
  /** this job seals one chunk set aside */
  seal?: boolean;
}

/** What the pool uses of a worker: a thread, or a channel served on this thread (`runHere`). */
interface WorkerPort {
  postMessage(value: ToWorker, transfer?: ArrayBuffer[]): void;
  terminate(): Promise<unknown>;
}

interface PoolWorker {
  thread: WorkerPort;
  jobs: number;
  /** of its jobs, the ones sealing another worker's chunk */
  sealing: number;
  /** the thread's CPU time at the last look, to tell how busy it has been since */
  seen?: ThreadCpu;
  /** its CPU time as of its latest finished batch */
  latest?: ThreadCpu;
}

/**
 * New chunks of one file in flight to other workers, and chunks one worker seals for others at once: enough to keep
 * the helper busy while the file's worker reads and hashes on, few enough that the raw chunks in flight stay small
 * (a chunk averages 1 MiB, 8 MiB at most).
 */
const asideLimit = 4;

/** looks closer together than this say too little about how busy a thread is */
const minLookMs = 1000;

const workerModule = new URL('./worker-thread.ts', import.meta.url);
const workerOptions = { resourceLimits: { maxYoungGenerationSizeMb: 8 } };

/**
 * Starts the first thread of a backup's pool before the pool exists, while the repository opens (its key derives,
 * its index loads): its start-up then overlaps that instead of delaying the first file. For a backup that
 * finds nothing new to read the thread is never used and costs that CPU time for nothing; close() stops it.
 */
export function startWorkerAhead(): void {
  startThreadAhead(workerModule, workerOptions);
}

export class FileReadError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

export interface SmallBatchResult {
  files: SmallFileRead[];
  /** plaintext bytes of the blobs this batch stored (the rest were known already) */
  added: number;
}

export class BackupPool {
  readonly #workers: PoolWorker[] = [];
  readonly #init: WorkerInit;
  readonly #size: number;
  /** after close, late callers (siblings of a failed file) are refused rather than given a new thread */
  #closed = false;
  readonly #writer: PackWriter | undefined;
  readonly #jobs = new Map<number, Job>();
  readonly #growth: GrowthRule;
  /** the main thread's CPU time at the last look */
  #mainSeen: ThreadCpu | undefined;
  #nextJob = 0;
  #setAside = 0;
  /** set by runHere: the one worker serves a channel on this thread */
  #here: ((port: MessagePort) => void) | undefined;

  /** `writer` receives new blobs of a backup; a pool used only to open blobs (restore) needs none */
  constructor(init: WorkerInit, size: number, writer?: PackWriter, growth = defaultGrowth) {
    this.#writer = writer;
    this.#growth = growth;
    this.#init = init;
    this.#size = Math.max(1, size);
  }

  /**
   * Threads start on first use: a backup with nothing new to read never pays for them. Batches of small files
   * (`heavy` false) start another only while the workers are the limit and a core is spare (`thread-growth.ts`).
   */
  #pick(heavy: boolean): PoolWorker {
    const idle = this.#workers.find((w) => w.jobs === 0);
    if (idle) return idle;
    if (this.#workers.length < (this.#here ? 1 : this.#size) && (heavy || this.#worthAnother())) {
      const w = this.#here ? this.#startHere(this.#here) : this.#startThread();
      w.thread.postMessage({ op: 'init', init: this.#init });
      this.#workers.push(w);
      return w;
    }
    return this.#workers.reduce((a, b) => (b.jobs < a.jobs ? b : a));
  }

  /**
   * From now on the pool's one worker runs on this thread, unless a thread was already started for it (ahead of the
   * backup, or by earlier work): for a read so small that starting a thread would cost more CPU time than the read
   * itself (bench/README.md).
   */
  async runHere(): Promise<void> {
    if (this.#workers.length > 0 || hasSpareThread(workerModule)) return;
    this.#here = (await import('./worker.ts')).serve;
  }

  #startThread(): PoolWorker {
    const thread = startThread(workerModule, workerOptions);
    const w: PoolWorker = { thread, jobs: 0, sealing: 0 };
    thread.on('message', (m: FromWorker) => void this.#onMessage(w, m));
    thread.on('error', (err) => this.#failWorker(w, err));
    return w;
  }

  /** A worker served by `serve` on the far end of a channel, on this thread (it throws where it runs). */
  #startHere(serve: (port: MessagePort) => void): PoolWorker {
    const { port1, port2 } = new MessageChannel();
    serve(port2);
    const w: PoolWorker = {
      thread: {
        postMessage: (value, transfer) => port1.postMessage(value, transfer),
        terminate: async () => port1.close(),
      },
      jobs: 0,
      sealing: 0,
    };
    port1.on('message', (m: FromWorker) => void this.#onMessage(w, m));
    return w;
  }

  /** New chunks of files sealed by a worker other than their file's, so far. */
  get setAside(): number {
    return this.#setAside;
  }

  /** Threads started so far (a worker run here is none). */
  get threads(): number {
    return this.#here ? 0 : this.#workers.length;
  }

  /**
   * Looks at how busy the threads have been since the last look, once every worker has finished a batch at least
   * `minLookMs` after it (CPU time, not event-loop use: a thread waiting for the disk looks busy to its event loop).
   */
  #worthAnother(): boolean {
    if (this.#workers.length === 0) return true;
    const shares: number[] = [];
    for (const w of this.#workers) {
      if (w.seen === undefined || w.latest === undefined || w.latest.atMs - w.seen.atMs < minLookMs) return false;
      shares.push(cpuShare(w.seen, w.latest));
    }
    const main = threadCpu();
    // set with the first worker's first batch, as every worker's `seen` here is
    const mainShare = cpuShare(this.#mainSeen!, main);
    this.#mainSeen = main;
    for (const w of this.#workers) w.seen = w.latest;
    return worthAnotherThread(shares, mainShare, availableParallelism(), this.#growth);
  }

  /** Chunks, deduplicates and stores one file; resolves with its content (blob ids in order) and size. */
  /** `blocks`: a device read by that plan; `bytesRead` then says how much of it was read. */
  backupFile(
    path: Uint8Array,
    onBytes?: (n: number) => void,
    signal?: AbortSignal,
    blocks?: BlockPlan,
  ): Promise<{ content: string[]; size: number; bytesRead?: number }> {
    return this.#submit(true, (job) => ({ op: 'file', job, path, blocks }), [], onBytes, signal) as Promise<{
      content: string[];
      size: number;
      bytesRead?: number;
    }>;
  }

  /**
   * Opens stored blobs read together in a worker: decrypt, decompress, verify each hash. Each result is the
   * plaintext or the reason that blob could not be opened.
   */
  openBlobs(bytes: Uint8Array, blobs: BlobInRead[]): Promise<(Uint8Array | string)[]> {
    return this.#submit(true, (job) => ({ op: 'open', job, bytes, blobs }), transferList([bytes])) as Promise<
      (Uint8Array | string)[]
    >;
  }

  /**
   * Stores a batch of small files, each as a single blob, in one worker: it reads and hashes them all, the new
   * blobs are claimed here in the batch's order (so duplicates, even within the batch, are stored once), and it
   * seals only those. Resolves once the new blobs are in the pack writer.
   */
  backupSmallFiles(paths: Uint8Array[], signal?: AbortSignal): Promise<SmallBatchResult> {
    const packed = packPaths(paths);
    return this.#submit(
      false,
      (job) => ({ op: 'small', job, paths: packed }),
      transferList([packed.bytes]),
      undefined,
      signal,
    ) as Promise<SmallBatchResult>;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#workers.map((w) => w.thread.terminate()), stopSpareThread(workerModule)]);
  }

  #submit(
    heavy: boolean,
    msg: (job: number) => ToWorker,
    transfer: ArrayBuffer[],
    onBytes?: (n: number) => void,
    signal?: AbortSignal,
  ): Promise<unknown> {
    signal?.throwIfAborted();
    if (this.#closed) return Promise.reject(new Error('the operation ended; no more work is accepted'));
    const worker = this.#pick(heavy);
    const job = this.#nextJob++;
    return new Promise((resolve, reject) => {
      worker.jobs++;
      this.#jobs.set(job, { worker, resolve, reject, onBytes });
      worker.thread.postMessage(msg(job), transfer);
      // the worker stops at its next chunk; the caller learns at once
      if (!signal) return;
      const onAbort = (): void => {
        const cancel: ToWorker = { op: 'cancel', job };
        worker.thread.postMessage(cancel);
        this.#finish(job)?.reject(signal.reason instanceof Error ? signal.reason : new Error('backup canceled'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#jobs.get(job)!.detach = () => signal.removeEventListener('abort', onAbort);
    });
  }

  #finish(job: number): Job | undefined {
    const j = this.#jobs.get(job);
    if (!j) return undefined;
    this.#jobs.delete(job);
    j.worker.jobs--;
    if (j.seal) j.worker.sealing--;
    j.detach?.();
    return j;
  }

  #answer(w: PoolWorker, job: number, ask: number, need: boolean, aside?: boolean): void {
    const msg: ToWorker = { op: 'answer', job, ask, need, aside };
    w.thread.postMessage(msg);
  }

  async #onMessage(w: PoolWorker, m: FromWorker): Promise<void> {
    switch (m.op) {
      case 'chunk': {
        const j = this.#jobs.get(m.job);
        j?.onBytes?.(m.length);
        const need = this.#writer!.claim('data', m.id);
        const aside = need && j !== undefined && (j.asideOpen ?? 0) < asideLimit && this.#helperFor(w) !== undefined;
        if (aside) {
          j.asideOpen = (j.asideOpen ?? 0) + 1;
          this.#setAside++;
        }
        this.#answer(w, m.job, m.ask, need, aside);
        return;
      }
      case 'raw': {
        const j = this.#jobs.get(m.job);
        // by a helper, or by this worker when none is free any more (one took a file of its own)
        const inWriter = this.#sealAside(this.#helperFor(w) ?? w, m.id, m.data).finally(() => {
          if (j) j.asideOpen!--;
        });
        inWriter.catch(() => undefined); // the file's job fails with it once its worker is done
        if (j) (j.aside ??= []).push(inWriter);
        return;
      }
      case 'sealedAside':
        try {
          await this.#writer!.add(m.blob, m.length);
          release(m.blob.sealed);
          this.#finish(m.job)?.resolve(undefined);
        } catch (err) {
          this.#finish(m.job)?.reject(err as Error);
        }
        return;
      case 'sealed': {
        try {
          await this.#writer!.add(m.blob, m.length);
          // copied into its pack: the transferred buffer is freed now rather than at some collection
          release(m.blob.sealed);
          this.#answer(w, m.job, m.ask, true);
        } catch (err) {
          this.#finish(m.job)?.reject(err as Error);
        }
        return;
      }
      case 'hashed': {
        const need = m.files.map((f) => f.size > 0 && this.#writer!.claim('data', f.id));
        const msg: ToWorker = { op: 'answerMany', job: m.job, ask: m.ask, need };
        w.thread.postMessage(msg);
        return;
      }
      case 'smallDone':
        // how busy a thread is counts from its first finished batch on: starting up (loading modules) keeps it busy
        w.latest = m.cpu;
        w.seen ??= m.cpu;
        this.#mainSeen ??= threadCpu();
        try {
          this.#finish(m.job)?.resolve({ files: m.files, added: await this.#addAll(m.sealed, m.blobs) });
        } catch (err) {
          this.#finish(m.job)?.reject(err as Error);
        }
        return;
      case 'fileDone':
        try {
          // the file's content is stored once every chunk it set aside is in the pack writer
          await Promise.all(this.#jobs.get(m.job)?.aside ?? []);
          this.#finish(m.job)?.resolve({ content: m.content, size: m.size, bytesRead: m.bytesRead });
        } catch (err) {
          this.#finish(m.job)?.reject(err as Error);
        }
        return;
      case 'opened':
        this.#finish(m.job)?.resolve(m.results);
        return;
      case 'failed':
        this.#finish(m.job)?.reject(new FileReadError(m.message, m.code));
        return;
    }
  }

  /**
   * A worker other than `w` that can seal a chunk of `w`'s file now: one with no file of its own and room for more
   * seals, or a thread started for it while the pool has room. None on a pool of one (or run on this thread): the
   * file's worker then seals its chunks itself, as it does while every other worker is busy with files of its own.
   */
  #helperFor(w: PoolWorker): PoolWorker | undefined {
    let best: PoolWorker | undefined;
    for (const o of this.#workers)
      if (o !== w && o.jobs === o.sealing && o.sealing < asideLimit && (!best || o.sealing < best.sealing)) best = o;
    if (best || this.#here || this.#closed || this.#workers.length >= this.#size) return best;
    const started = this.#startThread();
    started.thread.postMessage({ op: 'init', init: this.#init });
    this.#workers.push(started);
    return started;
  }

  /** Has `helper` seal a chunk set aside; settles once its blob is in the pack writer. */
  #sealAside(helper: PoolWorker, id: string, data: Uint8Array): Promise<void> {
    const job = this.#nextJob++;
    return new Promise<void>((resolve, reject) => {
      helper.jobs++;
      helper.sealing++;
      this.#jobs.set(job, { worker: helper, resolve: () => resolve(), reject, seal: true });
      helper.thread.postMessage({ op: 'seal', job, id, data }, transferList([data]));
    });
  }

  async #addAll(sealed: Uint8Array, blobs: SealedSmall[]): Promise<number> {
    let added = 0;
    let at = 0;
    for (const b of blobs) {
      const blob: PreparedBlob = {
        id: b.id,
        type: 'data',
        sealed: sealed.subarray(at, at + b.sealedLength),
        uncompressedLength: b.uncompressedLength,
      };
      at += b.sealedLength;
      await this.#writer!.add(blob, b.length);
      added += b.length;
    }
    // copied into their packs
    release(sealed);
    return added;
  }

  #failWorker(w: PoolWorker, err: Error): void {
    for (const [job, j] of this.#jobs) if (j.worker === w) this.#finish(job)?.reject(err);
  }
}
