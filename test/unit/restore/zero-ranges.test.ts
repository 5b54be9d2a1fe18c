// Issue 28, item 6: a block restore does not assume that a new volume reads as zeros. The target here is a regular
// file filled with 0xAA beforehand, standing for a volume holding someone's old blocks: after the restore it must
// equal the backed-up image byte for byte, zero ranges included. Only a target declared zeroed
// (DataDownload spec.targetPVC.zeroedVolume) keeps its zero ranges unwritten. `ferry repo restore` of a block
// volume's snapshot onto a device is shown on a loop device over such a file (needs root, as the box does).
import { test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backup } from '../../../src/engine/operations/backup.ts';
import { restoreStream } from '../../../src/engine/restore/stream.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { skipsZeroRanges } from '../../../src/engine/restore/zero-ranges.ts';
import type { ID } from '../../../src/engine/ids/id.ts';
import type { Repository } from '../../../src/engine/repository/repository.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';

const MiB = 1 << 20;
const run = promisify(execFile);

/** data, a long run of zeros (whole all-zero chunks), data with zero pages inside, data */
function image(): Uint8Array {
  const out = new Uint8Array(36 * MiB);
  out.set(randomBytes(2 * MiB, 1), 0);
  out.set(randomBytes(2 * MiB, 2), 26 * MiB);
  out.set(randomBytes(1 * MiB, 3), 29 * MiB);
  out.set(randomBytes(2 * MiB, 4), 34 * MiB);
  return out;
}

/** The image backed up as a block volume is, and restored over a target of the same size holding `garbage`. */
async function restoredOver(
  garbage: number,
  restore: (repo: Repository, tree: ID, target: string) => Promise<unknown>,
): Promise<{ data: Uint8Array; restored: Buffer }> {
  const work = await mkdtemp(join(tmpdir(), 'ferry-zero-ranges-'));
  try {
    const data = image();
    const source = join(work, 'disk.img');
    await writeFile(source, data);
    const repo = await testRepo();
    const { snapshot } = await backup(repo, { paths: [source], stream: { name: 'disk.img', size: data.length } });
    const target = join(work, 'volume');
    await writeFile(target, Buffer.alloc(data.length, garbage));
    await restore(repo, snapshot.tree, target);
    return { data, restored: await readFile(target) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function assertSame(restored: Buffer, data: Uint8Array): void {
  assert.equal(restored.length, data.length);
  const firstWrong = restored.findIndex((b, i) => b !== data[i]);
  assert.equal(
    firstWrong,
    -1,
    `byte ${firstWrong} is ${restored[firstWrong]} where the backup has ${data[firstWrong]}`,
  );
}

test('a block restore writes the zero ranges over a volume that held other data', async () => {
  const { data, restored } = await restoredOver(0xaa, (repo, tree, target) => restoreStream(repo, tree, target));
  assertSame(restored, data);
});

test("a restore of a block volume's snapshot onto a device (a loop device over old data) writes its zero ranges", async () => {
  const { data, restored } = await restoredOver(0x55, async (repo, tree, file) => {
    const { stdout } = await run('losetup', ['--find', '--show', file]);
    const device = stdout.trim();
    try {
      await restoreTree(repo, tree, { target: device, subpath: '/disk.img' });
    } finally {
      await run('losetup', ['--detach', device]);
    }
  });
  assertSame(restored, data);
});

test('a target declared zeroed keeps its zero ranges unwritten (what the flag promises costs nothing)', async () => {
  const { data, restored } = await restoredOver(0xaa, (repo, tree, target) =>
    restoreStream(repo, tree, target, { zeroed: true }),
  );
  // the data regions are restored; the long zero run was left as the "volume" had it
  assert.ok(restored.subarray(0, 2 * MiB).equals(data.subarray(0, 2 * MiB)));
  assert.ok(restored.subarray(26 * MiB, 28 * MiB).equals(data.subarray(26 * MiB, 28 * MiB)));
  assert.equal(restored[10 * MiB], 0xaa, 'the zero run was written although the target is declared zeroed');
});

test('zero ranges are skipped only in new files and in targets declared zeroed', () => {
  assert.equal(skipsZeroRanges({}), true, 'a file the restore creates reads as zeros in its holes');
  assert.equal(skipsZeroRanges({ existing: true }), false);
  assert.equal(skipsZeroRanges({ existing: true, zeroed: false }), false);
  assert.equal(skipsZeroRanges({ existing: true, zeroed: true }), true);
});
