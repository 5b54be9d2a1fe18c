// Walks ahead of the backup with lstat only, so progress can show totals (files, bytes) and an estimate.
// Directories are streamed (opendir), so a huge flat directory costs one entry at a time, not its whole listing.
// The calls are synchronous, in slices between turns of the event loop: a promise per entry cost a thread-pool round
// trip each, which made the scan dearer than an incremental backup's own walk.
import { lstatSync, opendirSync, type Dir } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Progress } from '../concurrency/progress.ts';

const slash = Buffer.from('/');
/** entries scanned between turns of the event loop, so the backup and its progress reports keep going */
const slice = 256;

export async function scanTotals(paths: string[], p: Progress, signal?: AbortSignal): Promise<void> {
  let sinceTurn = 0;
  const pace = async (): Promise<void> => {
    if (++sinceTurn < slice) return;
    sinceTurn = 0;
    await nextTurn();
  };
  const visit = async (path: Buffer, known?: 'file' | 'dir'): Promise<void> => {
    if (signal?.aborted) return;
    let kind = known;
    if (!kind || kind === 'file') {
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (!st) return;
      if (st.isFile()) {
        p.filesTotal++;
        p.bytesTotal += st.size;
        return;
      }
      kind = st.isDirectory() ? 'dir' : undefined;
    }
    if (kind !== 'dir') return;
    const dir = openDir(path);
    if (!dir) return;
    try {
      for (let e = readEntry(dir); e !== null; e = readEntry(dir)) {
        const name = e.name as unknown as Buffer;
        if (e.isDirectory()) await visit(Buffer.concat([path, slash, name]), 'dir');
        else if (e.isFile()) await visit(Buffer.concat([path, slash, name]), 'file');
        await pace();
      }
    } finally {
      dir.closeSync();
    }
  };
  for (const root of paths) await visit(Buffer.from(root));
  p.totalsFinal = true;
}

/** Totals are an estimate: an unreadable folder is left out here, and the backup itself reports it. */
function openDir(path: Buffer): Dir | undefined {
  try {
    return opendirSync(path, { encoding: 'buffer' } as never);
  } catch {
    return undefined;
  }
}

function readEntry(dir: Dir) {
  try {
    return dir.readSync();
  } catch {
    return null;
  }
}
