// Issue 34: one large file spread over several of restic's packs, restored by ferry with its blobs decrypted over the
// pack reads that brought them, is byte for byte what restic restores from the same repository, and keeps its holes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { restoreTree } from '../../src/engine/restore/restorer.ts';
import { listSnapshots } from '../../src/engine/repository/snapshots.ts';
import { restic } from '../support/restic.ts';
import { randomBytes, testPassword } from '../support/repo.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-large-file-'));
test.after(() => rm(work, { recursive: true, force: true }));

test("a large file in several of restic's packs restores as restic restores it, its holes kept", async () => {
  const source = join(work, 'source');
  await mkdir(source);
  const file = join(source, 'disk.img');
  // 48 MiB of data in four runs with 8 MiB holes between them: three or more packs of restic's 16 MiB
  const fh = await open(file, 'w');
  for (let run = 0; run < 4; run++) await fh.write(randomBytes(12 << 20, 40 + run), 0, 12 << 20, run * (20 << 20));
  await fh.truncate(4 * (20 << 20));
  await fh.close();
  const path = join(work, 'repo');
  await restic({ repo: path }, ['init']);
  await restic({ repo: path }, ['backup', source]);
  const repo = await Repository.open(new FsBackend(path), testPassword);
  await repo.loadIndex();
  const dataPacks = repo.index.packs().filter((p) => repo.index.span(p, 'data') !== undefined);
  assert.ok(dataPacks.length >= 3, `the file should lie in several packs, got ${dataPacks.length}`);
  const [snap] = await listSnapshots(repo);
  const ours = join(work, 'ferry');
  await restoreTree(repo, snap.snapshot.tree, { target: ours });
  const theirs = join(work, 'restic');
  await restic({ repo: path }, ['restore', 'latest', '--target', theirs]);
  const restored = join(ours, file);
  assert.ok((await readFile(restored)).equals(await readFile(join(theirs, file))), 'ferry and restic differ');
  assert.ok((await readFile(restored)).equals(await readFile(file)), 'the restored file differs from its source');
  // 48 MiB of data in 512-byte blocks, and a little for the file system's own: the 32 MiB of holes stay holes
  const blocks = (await stat(restored)).blocks;
  assert.ok(blocks < (48 << 20) / 512 + 4096, `${blocks} blocks allocated: the holes were filled`);
});
