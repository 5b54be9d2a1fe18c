// The demo's application data: what a small service might keep on its volume. Thousands of small JSON and log
// files in nested folders, a few large binaries (one of them twice, so deduplication shows), symlinks, an
// executable and a read-only file, so the restore is checked on modes and links as well as content.
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface SampleShape {
  smallFiles: number;
  /** sizes of the large random files */
  largeFiles: number[];
}

export const defaultShape: SampleShape = { smallFiles: 3000, largeFiles: [40 << 20, 16 << 20] };

export interface SampleInfo {
  files: number;
  bytes: number;
  symlinks: number;
}

export async function writeSample(root: string, shape: SampleShape = defaultShape): Promise<SampleInfo> {
  const info: SampleInfo = { files: 0, bytes: 0, symlinks: 0 };
  const put = async (path: string, data: string | Buffer): Promise<void> => {
    await writeFile(path, data);
    info.files++;
    info.bytes += Buffer.byteLength(data);
  };
  for (let i = 0; i < shape.smallFiles; i++) {
    const dir = join(root, 'orders', `region-${i % 6}`, `day-${String(i % 30).padStart(2, '0')}`);
    await mkdir(dir, { recursive: true });
    const record = {
      id: i,
      customer: `c-${(i * 7919) % 1000}`,
      items: (i % 5) + 1,
      note: 'shipped by ferry '.repeat(i % 40),
    };
    await put(join(dir, `order-${i}.json`), JSON.stringify(record));
  }
  await mkdir(join(root, 'blobs'), { recursive: true });
  for (const [i, size] of shape.largeFiles.entries())
    await put(join(root, 'blobs', `asset-${i}.bin`), randomBytes(size));
  if (shape.largeFiles.length > 0) {
    // the same bytes under another name: stored once
    await copyFile(join(root, 'blobs', 'asset-0.bin'), join(root, 'blobs', 'asset-0-copy.bin'));
    info.files++;
    info.bytes += shape.largeFiles[0];
  }
  await mkdir(join(root, 'logs'), { recursive: true });
  await put(
    join(root, 'logs', 'app.log'),
    Array.from(
      { length: 20_000 },
      (_, i) => `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z order ${i} accepted\n`,
    ).join(''),
  );
  await put(join(root, 'run.sh'), '#!/bin/sh\nexec ./server --data /data\n');
  await chmod(join(root, 'run.sh'), 0o755);
  await put(join(root, 'license.txt'), 'read only\n');
  await chmod(join(root, 'license.txt'), 0o444);
  for (const [target, name] of [
    ['logs/app.log', 'current.log'],
    ['blobs', 'assets'],
    ['/nowhere', 'dangling'],
  ]) {
    await symlink(target, join(root, name));
    info.symlinks++;
  }
  return info;
}
