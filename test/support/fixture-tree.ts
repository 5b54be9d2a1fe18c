// A directory tree with everything a volume can hold and a backup must keep: random and text files, empty and
// sparse files, deep directories, symlinks (one with a non-UTF-8 target), hard links, a fifo, odd names
// (non-UTF-8 bytes, newline, quotes, emoji), unusual modes, foreign ownership and nanosecond mtimes.
import { execFileSync } from 'node:child_process';
import { chmod, lchown, link, lutimes, mkdir, open, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from './repo.ts';

export interface FixtureOptions {
  /** number of small files spread over the tree */
  smallFiles?: number;
  /** size of the big random file (chunked into several blobs) */
  bigFile?: number;
  seed?: number;
}

const isRoot = process.getuid?.() === 0;

function p(dir: string, ...names: (string | Buffer)[]): Buffer {
  return Buffer.concat([Buffer.from(dir), ...names.flatMap((n) => [Buffer.from('/'), Buffer.from(n)])]);
}

export async function makeFixtureTree(dir: string, opts: FixtureOptions = {}): Promise<void> {
  const seed = opts.seed ?? 1;
  await mkdir(dir, { recursive: true });
  await writeFile(p(dir, 'big.bin'), randomBytes(opts.bigFile ?? 3 * 1024 * 1024 + 12345, seed));
  await writeFile(p(dir, 'text.txt'), 'ferry moves volumes\n'.repeat(50_000));
  await writeFile(p(dir, 'empty'), '');
  // sparse: 4 MiB hole, 64 KiB of data, then a 2 MiB hole at the end
  const sparse = await open(p(dir, 'sparse.img'), 'w');
  await sparse.write(randomBytes(65536, seed + 1), 0, 65536, 4 << 20);
  await sparse.truncate((4 << 20) + 65536 + (2 << 20));
  await sparse.close();
  let n = 0;
  for (let d = 0; d < 4; d++) {
    const sub = join(dir, `deep/level-${d}/a/b`);
    await mkdir(sub, { recursive: true });
    for (let i = 0; i < Math.ceil((opts.smallFiles ?? 200) / 4); i++) {
      await writeFile(join(sub, `f${n++}.dat`), randomBytes(100 + ((i * 997) % 9000), seed * 1000 + n));
    }
  }
  await symlink('text.txt', p(dir, 'link-to-text'));
  await symlink('/nonexistent/dangling', p(dir, 'dangling'));
  await symlink(Buffer.from([0x74, 0xff, 0xfe, 0x2e, 0x62, 0x69, 0x6e]), p(dir, 'link-non-utf8'));
  await writeFile(p(dir, 'hard-a'), 'hard linked content\n');
  await link(p(dir, 'hard-a'), p(dir, 'deep', 'hard-b'));
  await writeFile(p(dir, Buffer.from([0x6e, 0x6f, 0x6e, 0xff, 0x75, 0x74, 0x66])), 'name is not UTF-8\n');
  await writeFile(p(dir, 'new\nline "quoted" \\ back'), 'odd name\n');
  await writeFile(p(dir, 'emoji-🚢-ferry'), 'unicode name\n');
  await writeFile(p(dir, 'exec.sh'), '#!/bin/sh\necho hi\n');
  await chmod(p(dir, 'exec.sh'), 0o751);
  await writeFile(p(dir, 'setuid'), 'x');
  await chmod(p(dir, 'setuid'), 0o4755);
  await mkdir(p(dir, 'sticky'));
  await chmod(p(dir, 'sticky'), 0o1777);
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  execFileSync('setfattr', ['-n', 'user.ferry.note', '-v', 'kept across backup', join(dir, 'text.txt')]);
  execFileSync('setfattr', ['-n', 'user.ferry.dir', '-v', '0sAAEC/w==', join(dir, 'deep')]);
  if (isRoot) {
    await lchown(p(dir, 'text.txt'), 1234, 5678);
    await lchown(p(dir, 'link-to-text'), 4321, 8765);
  }
  // nanosecond mtimes; directories last, since creating entries changes them
  await utimes(p(dir, 'big.bin'), 1_600_000_000.5, 1_600_000_000.123456789);
  await lutimes(p(dir, 'link-to-text'), 1_500_000_000, 1_500_000_000.25);
  await utimes(p(dir, 'deep'), 1_400_000_000, 1_400_000_000.75);
}
