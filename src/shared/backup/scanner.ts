// Walks ahead of the backup with lstat only, so progress can show totals (files, bytes) and an estimate.
// Directories are streamed (opendir), so a huge flat directory costs one entry at a time, not its whole listing.
import { lstat, opendir } from 'node:fs/promises';
import type { Progress } from './progress.ts';

const slash = Buffer.from('/');

export async function scanTotals(paths: string[], p: Progress, signal?: AbortSignal): Promise<void> {
  const visit = async (path: Buffer, known?: 'file' | 'dir'): Promise<void> => {
    if (signal?.aborted) return;
    let kind = known;
    if (!kind || kind === 'file') {
      const st = await lstat(path).catch(() => undefined);
      if (!st) return;
      if (st.isFile()) {
        p.filesTotal++;
        p.bytesTotal += st.size;
        return;
      }
      kind = st.isDirectory() ? 'dir' : undefined;
    }
    if (kind !== 'dir') return;
    const dir = await opendir(path, { encoding: 'buffer' } as never).catch(() => undefined);
    if (!dir) return;
    for await (const e of dir) {
      const name = e.name as unknown as Buffer;
      if (e.isDirectory()) await visit(Buffer.concat([path, slash, name]), 'dir');
      else if (e.isFile()) await visit(Buffer.concat([path, slash, name]), 'file');
    }
  };
  for (const root of paths) await visit(Buffer.from(root));
  p.totalsFinal = true;
}
