// The thread that writes small restored files: each one is created, written, given its owner, mode and times, and
// closed with plain synchronous calls, one file after another. On the main thread each of those steps is a round
// trip through libuv's pool (and its futex wake-ups), which cost far more CPU than the system calls themselves.
import { closeSync, fchmodSync, fchownSync, ftruncateSync, futimesSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { SmallFileBatch, SmallFileJob, SmallFileResult } from './small-file-protocol.ts';

const port = parentPort!;
const isRoot = process.geteuid?.() === 0;

function describe(err: unknown): string {
  return (err as Error).message;
}

function writeContent(fd: number, job: SmallFileJob, bytes: Uint8Array): void {
  const from = job.start + job.pathLength;
  let done = 0;
  while (done < job.dataLength) done += writeSync(fd, bytes, from + done, job.dataLength - done, done);
  if (job.dataLength < job.size) ftruncateSync(fd, job.size);
}

/** The metadata steps that failed, in restoreMetadata's order (ownership clears setuid bits, so it comes first). */
function writeMetadata(fd: number, job: SmallFileJob): string[] {
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
    futimesSync(fd, job.atime, job.mtime);
  } catch (err) {
    failures.push(`times: ${describe(err)}`);
  }
  return failures;
}

/** Writes one file; a file whose content could not be written is removed. */
function writeOne(job: SmallFileJob, bytes: Uint8Array): SmallFileResult {
  const path = Buffer.from(bytes.buffer, bytes.byteOffset + job.start, job.pathLength);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'w', 0o600);
    writeContent(fd, job, bytes);
  } catch (err) {
    if (fd !== undefined) {
      closeSync(fd);
      unlinkSync(path);
    }
    return { content: describe(err) };
  }
  const failures = writeMetadata(fd, job);
  closeSync(fd);
  return failures.length > 0 ? { metadata: failures.join('; ') } : {};
}

port.on('message', (batch: SmallFileBatch) => {
  port.postMessage({ id: batch.id, results: batch.jobs.map((job) => writeOne(job, batch.bytes)) });
});
