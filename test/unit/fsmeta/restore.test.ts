// restoreMetadata on real entries: owner, setuid / sticky modes, times as precise as fs.utimes allows,
// symlinks' own times, extended attributes.
import assert from 'node:assert/strict';
import { lstat, mkdir, symlink, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { restoreMetadata, utimesSeconds } from '../../../src/shared/fsmeta/restore.ts';
import { XattrReader, XattrWriter } from '../../../src/shared/fsmeta/xattr.ts';
import { goMode } from '../../../src/shared/tree/mode.ts';
import { newNode } from '../../../src/shared/tree/node.ts';
import { isRoot, withScratch } from './scratch.ts';

const mtime = { ns: 1700000000123456789n, offset: 0 };
const atime = { ns: 1600000000987654321n, offset: 3600 };
const near = (actual: bigint, expected: bigint): boolean => (actual > expected ? actual - expected : expected - actual) <= 250n;

test('seconds for fs.utimes are the nearest double, also before 1970', () => {
  assert.equal(utimesSeconds({ ns: 1_500_000_000n, offset: 0 }), '1.5');
  assert.equal(utimesSeconds({ ns: -1_500_000_000n, offset: 0 }), '-1.5');
  assert.equal(Number(utimesSeconds(mtime)), 1700000000.123456789);
});

test('restores a time before 1970, which Node turns into now when given as a number', async () => {
  await withScratch(async (dir) => {
    await writeFile(`${dir}/old`, '');
    const old = { ns: -315619200123456789n, offset: 0 };
    await restoreMetadata(Buffer.from(`${dir}/old`), newNode(new Uint8Array(0), 'file', { mtime: old, atime: old }));
    assert.ok(near((await lstat(`${dir}/old`, { bigint: true })).mtimeNs, old.ns));
  });
});

test('restores owner, special mode bits, times and attributes of a file', async () => {
  await withScratch(async (dir) => {
    const path = Buffer.from(`${dir}/f`);
    await writeFile(path, 'x');
    const node = newNode(new Uint8Array(0), 'file', {
      mode: goMode.setuid | goMode.setgid | 0o750, uid: 1234, gid: 5678, mtime, atime,
      extendedAttributes: [{ name: 'user.k', value: new Uint8Array([1, 2]) }],
    });
    await restoreMetadata(path, node, { xattrs: new XattrWriter() });
    const st = await lstat(path, { bigint: true });
    assert.equal(Number(st.mode) & 0o7777, 0o6750);
    if (isRoot) assert.deepEqual([st.uid, st.gid], [1234n, 5678n]);
    else assert.equal(st.uid, BigInt(process.geteuid!()));
    assert.ok(near(st.mtimeNs, mtime.ns), `mtime ${st.mtimeNs} vs ${mtime.ns}`);
    assert.ok(near(st.atimeNs, atime.ns), `atime ${st.atimeNs} vs ${atime.ns}`);
    assert.deepEqual(await new XattrReader().read(path), node.extendedAttributes);
  });
});

test('a sticky directory and a symlink keep their own times', async () => {
  await withScratch(async (dir) => {
    await mkdir(`${dir}/d`);
    await writeFile(`${dir}/target`, '');
    await symlink('target', `${dir}/l`);
    await restoreMetadata(Buffer.from(`${dir}/d`), newNode(new Uint8Array(0), 'dir', { mode: (goMode.dir | goMode.sticky | 0o777) >>> 0, mtime, atime }));
    assert.equal(Number((await lstat(`${dir}/d`)).mode) & 0o7777, 0o1777);
    const before = await lstat(`${dir}/target`, { bigint: true });
    await restoreMetadata(Buffer.from(`${dir}/l`), newNode(new Uint8Array(0), 'symlink', { mtime, atime }));
    assert.ok(near((await lstat(`${dir}/l`, { bigint: true })).mtimeNs, mtime.ns));
    assert.equal((await lstat(`${dir}/target`, { bigint: true })).mtimeNs, before.mtimeNs);
  });
});

test('a missing entry fails naming the path and each step', async () => {
  await withScratch(async (dir) => {
    await assert.rejects(restoreMetadata(Buffer.from(`${dir}/gone`), newNode(new Uint8Array(0), 'file', { mtime, atime })),
      /could not restore the metadata of .*gone: ownership: .*ENOENT.*; mode: .*; times: /);
  });
});
