// Hands small files (content already in memory) to a thread that writes them with their metadata, in batches: the
// files ready in one turn of the event loop travel in one message. The thread starts on first use. Every file handed
// over settles: written, failed, or refused because the writer closed; close waits for the batches in flight, so no
// file is written (or left half-made) after it returns.
import { Worker } from 'node:worker_threads';
import type { TreeNode } from '../tree/node.ts';
import { posixPermissionsFromGoMode } from '../tree/mode.ts';
import { utimesSeconds } from '../fsmeta/restore.ts';
import type { SmallFileBatch, SmallFileJob, SmallFileReply, SmallFileResult } from './small-file-protocol.ts';

interface Queued {
  path: Buffer;
  data: Uint8Array;
  job: SmallFileJob;
}

interface Pending {
  resolve(r: SmallFileResult): void;
  reject(err: Error): void;
}

export class SmallFileWriter {
  #thread: Worker | undefined;
  #jobs: Queued[] = [];
  #waiting: Pending[] = [];
  readonly #sent = new Map<number, Pending[]>();
  #nextBatch = 0;
  #closed = false;
  /** settles once no batch is in flight */
  #idle: { promise: Promise<void>; resolve(): void } | undefined;

  /** Writes `data` as the file `path` (extended to `size`), then the node's owner, mode and times. */
  async write(path: Buffer, data: Uint8Array, size: number, node: TreeNode): Promise<void> {
    const job: SmallFileJob = {
      start: 0, pathLength: path.length, dataLength: data.length, size, uid: node.uid, gid: node.gid, mode: posixPermissionsFromGoMode(node.mode),
      atime: utimesSeconds(node.atime), mtime: utimesSeconds(node.mtime),
    };
    const result = await new Promise<SmallFileResult>((resolve, reject) => {
      if (this.#closed) throw closedError();
      if (this.#jobs.length === 0) setImmediate(() => this.#flush());
      this.#jobs.push({ path, data, job });
      this.#waiting.push({ resolve, reject });
    });
    const shown = path.toString('utf8');
    if (result.content !== undefined) throw new Error(`could not write ${shown}: ${result.content}`);
    if (result.metadata !== undefined) throw new Error(`could not restore the metadata of ${shown}: ${result.metadata}`);
  }

  /** Refuses files not yet handed to the thread, waits for those that were, and stops the thread. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#refuseQueued();
    if (this.#sent.size > 0) {
      this.#idle ??= Promise.withResolvers<void>();
      await this.#idle.promise;
    }
    await this.#thread?.terminate();
  }

  #refuseQueued(): void {
    const waiting = this.#waiting;
    this.#jobs = [];
    this.#waiting = [];
    for (const w of waiting) w.reject(closedError());
  }

  #flush(): void {
    if (this.#jobs.length === 0) return;
    if (this.#closed) return this.#refuseQueued();
    const id = this.#nextBatch++;
    const batch = packBatch(id, this.#jobs);
    this.#sent.set(id, this.#waiting);
    this.#jobs = [];
    this.#waiting = [];
    const thread = this.#start();
    // the thread keeps the process alive only while it owes replies
    thread.ref();
    thread.postMessage(batch, [batch.bytes.buffer]);
  }

  #settled(id: number): Pending[] {
    const waiting = this.#sent.get(id) ?? [];
    this.#sent.delete(id);
    if (this.#sent.size === 0) {
      this.#thread?.unref();
      this.#idle?.resolve();
      this.#idle = undefined;
    }
    return waiting;
  }

  #start(): Worker {
    if (this.#thread) return this.#thread;
    const thread = new Worker(new URL('./small-file-thread.ts', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    thread.on('message', (reply: SmallFileReply) => {
      const waiting = this.#settled(reply.id);
      reply.results.forEach((r, i) => waiting[i].resolve(r));
    });
    const failAll = (err: Error): void => {
      for (const id of [...this.#sent.keys()]) for (const w of this.#settled(id)) w.reject(err);
    };
    thread.on('error', failAll);
    thread.on('exit', () => {
      failAll(new Error('the thread writing small files stopped'));
      if (this.#thread === thread) this.#thread = undefined;
    });
    this.#thread = thread;
    return thread;
  }
}

function packBatch(id: number, queued: readonly Queued[]): SmallFileBatch {
  let length = 0;
  for (const q of queued) length += q.path.length + q.data.length;
  const bytes = new Uint8Array(length);
  let at = 0;
  const jobs = queued.map((q) => {
    bytes.set(q.path, at);
    bytes.set(q.data, at + q.path.length);
    const job = { ...q.job, start: at };
    at += q.path.length + q.data.length;
    return job;
  });
  return { id, bytes, jobs };
}

function closedError(): Error {
  return new Error('the restore ended before this file was written');
}
