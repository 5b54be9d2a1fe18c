// The blobs a pack reader has been asked for, and how they group into the runs one read (or one serving from a kept
// read) hands over.
import type { ID } from '../ids/id.ts';
import type { BlobLocation } from '../index/table.ts';
import { plainLength } from '../pack/blob.ts';

export interface Waiter {
  /** wants the blob as stored, not opened */
  sealed: boolean;
  resolve(data: Uint8Array): void;
  reject(err: Error): void;
}

export interface Wanted {
  loc: BlobLocation;
  /** several files may want the same blob */
  waiters: Waiter[];
}

export interface Range {
  pack: ID;
  start: number;
  end: number;
}

export interface CachedRange extends Range {
  bytes: Uint8Array;
}

/** The budget a wanted blob takes: its plaintext once for every waiter, as each gives its own back through done(). */
export function share(w: Wanted): number {
  return plainLength(w.loc) * w.waiters.length;
}

export function covers(r: Range, loc: BlobLocation): boolean {
  return r.pack === loc.pack && r.start <= loc.offset && loc.offset + loc.length <= r.end;
}

/** Blobs in pack order cut into runs of at most `runPlain` plaintext (a larger blob is a run of its own). */
export function cutRuns(wanted: Wanted[], runPlain: number): Wanted[][] {
  const runs: Wanted[][] = [];
  let run: Wanted[] = [];
  let plain = 0;
  for (const w of wanted) {
    const n = share(w);
    if (run.length > 0 && plain + n > runPlain) {
      runs.push(run);
      run = [];
      plain = 0;
    }
    run.push(w);
    plain += n;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** True when no two of the blobs (in offset order, as runs are) share a byte. */
export function apart(run: readonly Wanted[]): boolean {
  for (let i = 1; i < run.length; i++)
    if (run[i].loc.offset < run[i - 1].loc.offset + run[i - 1].loc.length) return false;
  return true;
}

/** Whether two index entries name the same blob as stored (one offset of a pack holds one blob). */
export function sameBlob(a: BlobLocation, b: BlobLocation): boolean {
  return a.id === b.id && a.length === b.length && a.uncompressedLength === b.uncompressedLength;
}
