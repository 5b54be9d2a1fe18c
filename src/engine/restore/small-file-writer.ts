// Hands small files (content in memory, as plaintext or as their one sealed blob) to a thread that writes them with
// their metadata, in batches: the files ready in one turn of the event loop travel in one message. The thread starts
// on first use. Every file handed over settles: written, failed, or refused because the writer closed; close waits
// for the batches in flight (and the reads the thread is opening), so no file is written (or left half-made) after
// it returns.
import type { Worker } from 'node:worker_threads';
import { startThread, startThreadAhead, stopSpareThread } from '../concurrency/thread.ts';
import type { MasterKey } from '../crypto/key.ts';
import type { BlobLocation } from '../index/table.ts';
import { CorruptBlobError } from '../repository/errors.ts';
import type { TreeNode } from '../tree/node.ts';
import { posixPermissionsFromGoMode } from '../tree/mode.ts';
import { nodeTimes } from '../fsmeta/restore.ts';
import {
  encodeBatch,
  type OpenReply,
  type OpenRequest,
  type SmallFile,
  type SmallFileBatch,
  type SmallFileReply,
  type SmallFileResult,
  type ToSmallFileThread,
} from './small-file-protocol.ts';

interface Pending<T = SmallFileResult> {
  resolve(r: T): void;
  reject(err: Error): void;
}

const threadModule = new URL('./small-file-thread.ts', import.meta.url);
/**
 * Pack reads the thread may hold at once: the one it opens and one waiting behind it. Given reads only while idle, it
 * waited for the next between any two, and opened a third of a large file's reads or less while the restore's own
 * thread opened the rest; with one waiting, the two share them and a single 4 GiB file restores about 10% sooner
 * (bench/README.md, "A read waiting at the small-file thread").
 */
const readsQueued = 2;
/**
 * The thread's young generation may grow to 16 MiB. At 4 it scavenged after every megabyte or so of the opened blobs
 * and batches it allocates, and restores of large and of tiny files were slower, at no lower peak memory; 32 was no
 * faster than 16 (bench/README.md, "The small-file thread's young generation").
 */
const threadOptions = { resourceLimits: { maxYoungGenerationSizeMb: 16 } };

/**
 * Starts a restore's small-file thread before its writer exists, while the repository opens: a tree of small files
 * needs it from the first file on, and its start-up then overlaps opening. close() stops one unused.
 */
export function startSmallFileThreadAhead(): void {
  startThreadAhead(threadModule, threadOptions);
}

export class SmallFileWriter {
  readonly #key: MasterKey;
  #thread: Worker | undefined;
  #jobs: SmallFile[] = [];
  #waiting: Pending[] = [];
  /** each batch in flight: its files, and how many of them the thread has answered */
  readonly #sent = new Map<number, { waiting: Pending[]; done: number }>();
  #nextBatch = 0;
  /** pack reads the thread is opening, by request */
  readonly #opening = new Map<number, Pending<(Uint8Array | string)[]>>();
  /** the descriptor of the target folder, which paths are relative to */
  #root = -1;
  #closed = false;
  /** settles once no batch or read is in flight (for close) */
  #idle: { promise: Promise<void>; resolve(): void } | undefined;

  /** `key` opens the sealed files. */
  constructor(key: MasterKey) {
    this.#key = key;
  }

  /**
   * Takes the descriptor of the folder the paths will be relative to, and starts the thread ahead of the first
   * batch, so its start-up overlaps other work.
   */
  start(root: number): void {
    this.#root = root;
    if (!this.#closed) this.#start().unref();
  }

  /**
   * Starts the thread to open reads only (see `takesReads`): a restore of one file, such as a block volume's stream,
   * has no small files, and its one thread would otherwise open every blob alone.
   */
  startForReads(): void {
    if (!this.#closed) this.#start().unref();
  }

  /** Writes `data` as the file `path` (relative to the root folder; extended to `size`), then the node's owner, mode and times. */
  write(path: Buffer, data: Uint8Array, size: number, node: TreeNode): Promise<void> {
    return this.#submit(job('file', path, data, size, node));
  }

  /**
   * Like write, with the content as its one blob is stored at `loc`: the thread opens it and checks it against its
   * id before it creates the file; a blob that fails the check fails as a CorruptBlobError, and no file is made.
   */
  writeSealed(path: Buffer, sealed: Uint8Array, loc: BlobLocation, size: number, node: TreeNode): Promise<void> {
    const file = job('sealed', path, sealed, size, node);
    file.blob = { id: Buffer.from(loc.id, 'hex'), uncompressedLength: loc.uncompressedLength };
    return this.#submit(file, (why) => new CorruptBlobError(loc.pack, loc.id, why));
  }

  /** Sets the owner, mode and times of an existing folder (once its entries are all written). */
  writeMetadata(path: Buffer, node: TreeNode): Promise<void> {
    return this.#submit(job('metadata', path, new Uint8Array(0), 0, node));
  }

  async #submit(file: SmallFile, blobError?: (why: string) => Error): Promise<void> {
    const result = await new Promise<SmallFileResult>((resolve, reject) => {
      if (this.#closed) throw closedError();
      if (this.#jobs.length === 0) setImmediate(() => this.#flush());
      this.#jobs.push(file);
      this.#waiting.push({ resolve, reject });
    });
    if (result.blob !== undefined) throw blobError!(result.blob);
    const shown = Buffer.from(file.path).toString('utf8') || '.';
    if (result.content !== undefined) throw new Error(`could not write ${shown}: ${result.content}`);
    if (result.metadata !== undefined)
      throw new Error(`could not restore the metadata of ${shown}: ${result.metadata}`);
  }

  /**
   * True while the thread may take a pack read to open (openRead): started, no small file waiting or being written,
   * and fewer than `readsQueued` reads already given. A restore has it open a read its own thread would otherwise open
   * while this one sat idle.
   */
  get takesReads(): boolean {
    return (
      !this.#closed &&
      this.#thread !== undefined &&
      this.#jobs.length === 0 &&
      this.#sent.size === 0 &&
      this.#opening.size < readsQueued
    );
  }

  /** Opens the blobs of a pack read (offsets into `bytes`) on the thread; `bytes` moves there (detached here). */
  openRead(bytes: Uint8Array<ArrayBuffer>, blobs: OpenRequest['blobs']): Promise<(Uint8Array | string)[]> {
    return new Promise((resolve, reject) => {
      if (this.#closed) throw closedError();
      const id = this.#nextBatch++;
      const thread = this.#start();
      // posted first: a read the message cannot take fails here, owing nothing (the answer comes in a later turn)
      thread.postMessage({ op: 'open', id, bytes, blobs } satisfies OpenRequest, [bytes.buffer]);
      this.#opening.set(id, { resolve, reject });
      thread.ref();
    });
  }

  /** Refuses files not yet handed to the thread, waits for those that were, and stops the thread. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#refuseQueued();
    if (this.#sent.size > 0 || this.#opening.size > 0) {
      this.#idle ??= Promise.withResolvers<void>();
      await this.#idle.promise;
    }
    await Promise.all([this.#thread?.terminate(), stopSpareThread(threadModule)]);
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
    const batch: SmallFileBatch = { op: 'batch', id, root: this.#root, bytes: encodeBatch(this.#jobs) };
    this.#sent.set(id, { waiting: this.#waiting, done: 0 });
    this.#jobs = [];
    this.#waiting = [];
    const thread = this.#start();
    // the thread keeps the process alive only while it owes replies
    thread.ref();
    thread.postMessage(batch, [batch.bytes.buffer]);
  }

  #settled(id: number): Pending[] {
    const waiting = this.#sent.get(id)?.waiting ?? [];
    this.#sent.delete(id);
    this.#quiet();
    return waiting;
  }

  /** Once nothing is owed, the thread no longer keeps the process alive, and close may go on. */
  #quiet(): void {
    if (this.#sent.size === 0 && this.#opening.size === 0) {
      this.#thread?.unref();
      this.#idle?.resolve();
      this.#idle = undefined;
    }
  }

  #start(): Worker {
    if (this.#thread) return this.#thread;
    const thread = startThread(threadModule, threadOptions);
    thread.postMessage({ op: 'init', key: this.#key } satisfies ToSmallFileThread);
    thread.on('message', (reply: SmallFileReply | OpenReply) => {
      if (reply.op === 'opened') {
        const pending = this.#opening.get(reply.id);
        this.#opening.delete(reply.id);
        this.#quiet();
        pending?.resolve(reply.results);
        return;
      }
      const batch = this.#sent.get(reply.id);
      if (!batch) return;
      for (const [i, failure] of reply.failures) batch.waiting[i].resolve(failure);
      // a file named among the failures is settled already; resolving it again changes nothing
      for (let i = batch.done; i < reply.done; i++) batch.waiting[i].resolve({});
      batch.done = reply.done;
      if (batch.done === batch.waiting.length) this.#settled(reply.id);
    });
    const failAll = (err: Error): void => {
      for (const id of [...this.#sent.keys()]) for (const w of this.#settled(id)) w.reject(err);
      const opening = [...this.#opening.values()];
      this.#opening.clear();
      this.#quiet();
      for (const w of opening) w.reject(err);
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

function job(kind: SmallFile['kind'], path: Buffer, data: Uint8Array, size: number, node: TreeNode): SmallFile {
  return {
    kind,
    path,
    data,
    size,
    uid: node.uid,
    gid: node.gid,
    mode: posixPermissionsFromGoMode(node.mode),
    times: nodeTimes(node),
  };
}

function closedError(): Error {
  return new Error('the restore ended before this file was written');
}
