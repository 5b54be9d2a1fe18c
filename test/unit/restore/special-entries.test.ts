// Fifos, device nodes, symlinks and folders come back with their type, st_rdev, mode, owner and both times exact,
// made by the system calls (mknodat, symlinkat, mkdirat) rather than by spawned tools.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../../src/engine/backend/fs.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { listSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { utcTime } from '../../../src/engine/tree/gotime.ts';
import { goMode } from '../../../src/engine/tree/mode.ts';
import { newNode } from '../../../src/engine/tree/node.ts';
import { RawTreeWriter } from '../../support/hostile-repo.ts';
import { testRepo } from '../../support/repo.ts';

// run as root (as CI does): device nodes and foreign owners need it
test('fifos, devices, symlinks and folders are restored exactly', async () => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-special-'));
  try {
    // a device number past 8 bits of minor and 12 of major: the kernel's encoding must come back as recorded
    execFileSync('mknod', [join(work, 'probe'), 'b', '300', '70000']);
    const rdev = (await lstat(join(work, 'probe'), { bigint: true })).rdev;
    const repo = await testRepo(new FsBackend(join(work, 'repo')));
    const w = new RawTreeWriter(repo);
    const atime = utcTime(1_600_000_000_000_000_001n);
    const mtime = utcTime(-1_000_000_000_999_999_999n);
    const common = { atime, mtime, uid: 1234, gid: 5678 };
    const sub = await w.tree([
      newNode(Buffer.from('inner'), 'fifo', { ...common, mode: (goMode.namedPipe | 0o640) >>> 0 }),
    ]);
    const root = await w.tree([
      newNode(Buffer.from('block'), 'dev', { ...common, mode: (goMode.device | 0o660) >>> 0, device: rdev }),
      newNode(Buffer.from('char'), 'chardev', {
        ...common,
        mode: (goMode.device | goMode.charDevice | 0o666) >>> 0,
        device: 0x103n,
      }),
      newNode(Buffer.from('dir'), 'dir', {
        ...common,
        mode: (goMode.dir | goMode.sticky | 0o1777) >>> 0,
        subtree: sub,
      }),
      newNode(Buffer.from('link'), 'symlink', {
        ...common,
        mode: (goMode.symlink | 0o777) >>> 0,
        linkTarget: Buffer.from('/etc/passwd'),
      }),
    ]);
    const id = await w.snapshot(root);
    await repo.loadIndex();
    const tree = (await listSnapshots(repo)).find((e) => e.id === id)!.snapshot.tree;
    const target = join(work, 'target');
    await restoreTree(repo, tree, { target });
    const expect: [string, (s: import('node:fs').BigIntStats) => boolean, number, bigint][] = [
      ['block', (s) => s.isBlockDevice(), 0o660, rdev],
      ['char', (s) => s.isCharacterDevice(), 0o666, 0x103n],
      ['dir', (s) => s.isDirectory(), 0o1777, 0n],
      ['dir/inner', (s) => s.isFIFO(), 0o640, 0n],
      ['link', (s) => s.isSymbolicLink(), 0o777, 0n],
    ];
    for (const [name, isType, mode, device] of expect) {
      const st = await lstat(join(target, name), { bigint: true });
      assert.ok(isType(st), `${name} type`);
      assert.deepEqual(
        [Number(st.mode) & 0o7777, st.rdev, st.uid, st.gid, st.atimeNs, st.mtimeNs],
        [mode, device, 1234n, 5678n, atime.ns, mtime.ns],
        name,
      );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
