// restoreMetadata on real entries: owner, setuid / sticky modes, times exact to the nanosecond (before 1970 too),
// symlinks' own times, extended attributes; nothing reached through a symlink.
import assert from 'node:assert/strict';
import { lstat, mkdir, symlink, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { restoreMetadata } from '../../../src/engine/fsmeta/restore.ts';
import { XattrReader } from '../../../src/engine/fsmeta/xattr.ts';
import { goMode } from '../../../src/engine/tree/mode.ts';
import { newNode } from '../../../src/engine/tree/node.ts';
import { isRoot, withScratch } from './scratch.ts';

const mtime = { ns: 1700000000123456789n, offset: 0 };
const atime = { ns: 1600000000987654321n, offset: 3600 };

test('restores times before 1970 and near today to the nanosecond', async () => {
  await withScratch(async (dir) => {
    await writeFile(`${dir}/old`, '');
    const old = { ns: -315619200123456789n, offset: 0 };
    restoreMetadata(`${dir}/old`, newNode(new Uint8Array(0), 'file', { mtime: old, atime: mtime }));
    const st = await lstat(`${dir}/old`, { bigint: true });
    assert.deepEqual([st.mtimeNs, st.atimeNs], [old.ns, mtime.ns]);
  });
});

test('restores owner, special mode bits, exact times and attributes of a file', async () => {
  await withScratch(async (dir) => {
    const path = `${dir}/f`;
    await writeFile(path, 'x');
    const node = newNode(new Uint8Array(0), 'file', {
      mode: goMode.setuid | goMode.setgid | 0o750,
      uid: 1234,
      gid: 5678,
      mtime,
      atime,
      extendedAttributes: [
        { name: 'user.k', value: new Uint8Array([1, 2]) },
        { name: 'user.empty', value: new Uint8Array(0) },
      ],
    });
    restoreMetadata(path, node, { xattrs: true });
    const st = await lstat(path, { bigint: true });
    assert.equal(Number(st.mode) & 0o7777, 0o6750);
    if (isRoot) assert.deepEqual([st.uid, st.gid], [1234n, 5678n]);
    else assert.equal(st.uid, BigInt(process.geteuid!()));
    assert.deepEqual([st.mtimeNs, st.atimeNs], [mtime.ns, atime.ns]);
    assert.deepEqual(await new XattrReader().read(Buffer.from(path)), node.extendedAttributes);
  });
});

test("a sticky directory and a symlink get their own times; the symlink's target is untouched", async () => {
  await withScratch(async (dir) => {
    await mkdir(`${dir}/d`);
    await writeFile(`${dir}/target`, '');
    await symlink('target', `${dir}/l`);
    restoreMetadata(
      `${dir}/d`,
      newNode(new Uint8Array(0), 'dir', { mode: (goMode.dir | goMode.sticky | 0o777) >>> 0, mtime, atime }),
    );
    const d = await lstat(`${dir}/d`, { bigint: true });
    assert.deepEqual([Number(d.mode) & 0o7777, d.mtimeNs, d.atimeNs], [0o1777, mtime.ns, atime.ns]);
    const before = await lstat(`${dir}/target`, { bigint: true });
    restoreMetadata(`${dir}/l`, newNode(new Uint8Array(0), 'symlink', { mtime, atime, uid: 4321, gid: 4321 }));
    const l = await lstat(`${dir}/l`, { bigint: true });
    assert.deepEqual([l.mtimeNs, l.atimeNs], [mtime.ns, atime.ns]);
    const after = await lstat(`${dir}/target`, { bigint: true });
    assert.deepEqual(
      [after.mtimeNs, after.atimeNs, after.uid, after.mode],
      [before.mtimeNs, before.atimeNs, before.uid, before.mode],
    );
    if (isRoot) assert.equal(l.uid, 4321n);
  });
});

test('a missing entry fails naming the path and each step', async () => {
  await withScratch(async (dir) => {
    assert.throws(
      () => restoreMetadata(`${dir}/gone`, newNode(new Uint8Array(0), 'file', { mtime, atime })),
      /could not restore the metadata of .*gone: ownership: ENOENT.*; mode: .*; times: /,
    );
  });
});
