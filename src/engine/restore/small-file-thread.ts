// The thread that writes small restored files: each one is created, written, given its owner, mode and times, and
// closed with plain synchronous calls, one file after another. On the main thread each of those steps is a round
// trip through libuv's pool (and its futex wake-ups), which cost far more CPU than the system calls themselves.
// Most small files come sealed, and this thread opens and checks them too: the main thread of a restore is its
// busiest, and this one had time to spare. Files are created below the target's descriptor without following any
// symlink (target-entries.ts), and their metadata goes through the new descriptor, times to the nanosecond.
import { fchmodSync, fchownSync, ftruncateSync, writeSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { MasterKey } from '../crypto/key.ts';
import { bytesToID } from '../ids/id.ts';
import { openVerified, openVerifiedMany } from '../pack/prepare.ts';
import { closeDescriptor } from '../sys/beneath.ts';
import { setTimes } from '../sys/attributes.ts';
import { createFile, openFolder, removeFile } from './target-entries.ts';
import {
  decodeBatch,
  type SmallFile,
  type SmallFileReply,
  type OpenReply,
  type OpenRequest,
  type SmallFileResult,
  type ToSmallFileThread,
} from './small-file-protocol.ts';

const port = parentPort!;
/** from the first message */
let key: MasterKey;
const isRoot = process.geteuid?.() === 0;

function describe(err: unknown): string {
  return (err as Error).message;
}

function writeContent(fd: number, job: SmallFile): void {
  let done = 0;
  while (done < job.data.length) done += writeSync(fd, job.data, done, job.data.length - done, done);
  if (job.data.length < job.size) ftruncateSync(fd, job.size);
}

/**
 * The metadata steps that failed, in restoreMetadata's order (ownership clears setuid bits, so it comes first), on
 * `fd`: a file just written, or a folder opened for it.
 */
function writeMetadata(fd: number, job: SmallFile): string[] {
  const failures: string[] = [];
  try {
    fchownSync(fd, job.uid, job.gid);
  } catch (err) {
    // like cp -a and restic: without root, files simply belong to the restoring user
    if (isRoot || (err as NodeJS.ErrnoException).code !== 'EPERM') failures.push(`ownership: ${describe(err)}`);
  }
  try {
    fchmodSync(fd, job.mode);
  } catch (err) {
    failures.push(`mode: ${describe(err)}`);
  }
  try {
    setTimes(fd, job.times);
  } catch (err) {
    failures.push(`times: ${describe(err)}`);
  }
  return failures;
}

/** Closes and removes a file whose content failed; the content's error is the one reported, so these stay quiet. */
function discard(root: number, fd: number, path: Uint8Array): void {
  try {
    closeDescriptor(fd);
  } catch {
    // the descriptor is released even when close reports an error
  }
  try {
    removeFile(root, path);
  } catch {
    // already gone, or its folder is: nothing left that looks complete
  }
}

/** Writes one file below `root`; a file whose content could not be written is removed. */
function writeOne(root: number, job: SmallFile): SmallFileResult {
  let fd: number | undefined;
  try {
    fd = createFile(root, job.path);
    writeContent(fd, job);
  } catch (err) {
    if (fd !== undefined) discard(root, fd, job.path);
    return { content: describe(err) };
  }
  return closing(fd, writeMetadata(fd, job));
}

/** Closes `fd`, adding its failure to `failures`, and reports them. */
function closing(fd: number, failures: string[]): SmallFileResult {
  try {
    closeDescriptor(fd);
  } catch (err) {
    failures.push(`close: ${describe(err)}`);
  }
  return failures.length > 0 ? { metadata: failures.join('; ') } : {};
}

/** `opened`: a sealed file's plaintext, or why its blob could not be trusted. */
function restoreOne(root: number, job: SmallFile, opened: Uint8Array | string | undefined): SmallFileResult {
  if (job.kind === 'sealed')
    return typeof opened === 'string' ? { blob: opened } : writeOne(root, { ...job, data: opened! });
  if (job.kind === 'file') return writeOne(root, job);
  let fd: number;
  try {
    fd = openFolder(root, job.path);
  } catch (err) {
    return { metadata: describe(err) };
  }
  return closing(fd, writeMetadata(fd, job));
}

/** Sealed bytes opened at once: a batch may hold 256 files of 64 KiB, whose plaintexts need not all live together. */
const groupBytes = 1 << 20;

/**
 * Files answered at once: the restore frees a file's place once it is answered, and waiting for a whole batch of 256
 * left this thread idle while the restore prepared the next (the two took turns rather than working together).
 */
const groupFiles = 32;

/** Where the group of files starting at `from` ends: past `groupBytes` of sealed content, `groupFiles` files, or the batch's end. */
function groupEnd(files: SmallFile[], from: number): number {
  let bytes = 0;
  let i = from;
  while (i < files.length && bytes < groupBytes && i - from < groupFiles) {
    if (files[i].kind === 'sealed') bytes += files[i].data.length;
    i++;
  }
  return i;
}

/**
 * A group's sealed files opened together: the small blobs ferry sealed as one batch at backup come back mostly in
 * the same order, and a run of them decrypts with one cipher call rather than one per file (see aesCTRRun).
 */
function openSealed(files: SmallFile[]): (Uint8Array | string | undefined)[] {
  const sealed = files.flatMap((f, i) => (f.kind === 'sealed' ? [i] : []));
  const opened = openVerifiedMany(
    key,
    sealed.map((i) => ({
      sealed: files[i].data,
      uncompressedLength: files[i].blob!.uncompressedLength,
      id: bytesToID(files[i].blob!.id),
    })),
  );
  const byFile: (Uint8Array | string | undefined)[] = new Array(files.length);
  sealed.forEach((fileAt, k) => {
    byFile[fileAt] = opened[k];
  });
  return byFile;
}

/**
 * Opens a read's blobs over its bytes, which are this thread's now. What goes back is moved, not cloned: the read
 * itself, when plaintexts decrypted in place are views of it, and every other plaintext as a buffer of its own (a
 * small one may be a view of Node's shared pool of small buffers, which cannot be moved, or of a few bytes more than
 * it holds): so every plaintext that is not a view of the read owns its buffer, which the pack reader relies on.
 */
function openRead(req: OpenRequest): void {
  const read = req.bytes.buffer;
  const results = req.blobs.map((b) => {
    const r = openVerified(key, req.bytes.subarray(b.offset, b.offset + b.length), b.uncompressedLength, b.id, true);
    if (typeof r === 'string' || r.buffer === read) return r;
    return r.byteOffset === 0 && r.byteLength === r.buffer.byteLength ? r : new Uint8Array(r);
  });
  const moved = new Set<ArrayBuffer>();
  for (const r of results) if (typeof r !== 'string') moved.add(r.buffer as ArrayBuffer);
  port.postMessage({ op: 'opened', id: req.id, results } satisfies OpenReply, [...moved]);
  // a read no plaintext is a view of (compressed blobs, short ones) is dead here: its memory goes now, as a read
  // opened on the restore's own thread does, not at this thread's next full collection
  if (!moved.has(read)) read.transfer(0);
}

port.on('message', (batch: ToSmallFileThread) => {
  if (batch.op === 'init') {
    key = batch.key;
    return;
  }
  if (batch.op === 'open') return openRead(batch);
  const files = decodeBatch(batch.bytes);
  for (let from = 0; from < files.length;) {
    const to = groupEnd(files, from);
    const opened = openSealed(files.slice(from, to));
    const failures: SmallFileReply['failures'] = [];
    for (let i = from; i < to; i++) {
      const result = restoreOne(batch.root, files[i], opened[i - from]);
      if (Object.keys(result).length > 0) failures.push([i, result]);
    }
    port.postMessage({ op: 'written', id: batch.id, done: to, failures } satisfies SmallFileReply);
    from = to;
  }
});
