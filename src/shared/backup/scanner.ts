// Walks ahead of the backup with lstat only, so progress can show totals (files, bytes) and an estimate.
import { lstat, readdir } from 'node:fs/promises';
import type { Progress } from './progress.ts';

export async function scanTotals(paths: string[], p: Progress, signal?: AbortSignal): Promise<void> {
  const stack: Buffer[] = paths.map((x) => Buffer.from(x));
  while (stack.length > 0) {
    if (signal?.aborted) return;
    const path = stack.pop()!;
    const st = await lstat(path).catch(() => undefined);
    if (!st) continue;
    if (st.isDirectory()) {
      const names = await readdir(path, { encoding: 'buffer' }).catch(() => [] as Buffer[]);
      for (const n of names) stack.push(Buffer.concat([path, Buffer.from('/'), n]));
    } else if (st.isFile()) {
      p.filesTotal++;
      p.bytesTotal += st.size;
    }
  }
  p.totalsFinal = true;
}
