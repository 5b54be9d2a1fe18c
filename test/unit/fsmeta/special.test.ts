// Fifos and device nodes created through mkfifo / mknod and renamed to raw-byte names.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, readdir } from 'node:fs/promises';
import { test } from 'node:test';
import { createSpecialFiles, deviceMajor, deviceMinor } from '../../../src/shared/fsmeta/special.ts';
import { newNode } from '../../../src/shared/tree/node.ts';
import { isRoot, rawPath, withScratch } from './scratch.ts';

test('splits st_rdev of /dev/null into its published numbers 1, 3', async () => {
  const rdev = (await lstat('/dev/null', { bigint: true })).rdev;
  assert.deepEqual([deviceMajor(rdev), deviceMinor(rdev)], [1, 3]);
});

test('creates fifos under any name, in batches, and cleans its staging folder', async () => {
  await withScratch(async (dir) => {
    const names = [Buffer.from('p\x80', 'latin1'), Buffer.from('new\nline'), ...Array.from({ length: 520 }, (_v, i) => Buffer.from(`f${i}`))];
    await createSpecialFiles(dir, names.map((n) => ({ path: rawPath(dir, n), node: newNode(n, 'fifo') })));
    for (const n of names) {
      const st = await lstat(rawPath(dir, n));
      assert.ok(st.isFIFO());
      assert.equal(st.mode & 0o777, 0o600);
    }
    assert.equal((await readdir(dir)).length, names.length);
  });
});

test('creates device nodes with large major and minor numbers as root', async () => {
  await withScratch(async (dir) => {
    const path = Buffer.from(`${dir}/dev`);
    const probe = await lstat('/dev/null', { bigint: true });
    const create = createSpecialFiles(dir, [
      { path, node: newNode(new Uint8Array(0), 'chardev', { device: probe.rdev }) },
      { path: Buffer.from(`${dir}/sock`), node: newNode(new Uint8Array(0), 'socket') },
    ]);
    if (!isRoot) return assert.rejects(create, /could not create device node .*needs root/);
    await create;
    const st = await lstat(path, { bigint: true });
    assert.ok(st.isCharacterDevice());
    assert.equal(st.rdev, probe.rdev);
    await assert.rejects(lstat(`${dir}/sock`), /ENOENT/);
    // round trip through mknod's decimal numbers: the kernel's encoding must match deviceMajor/Minor
    const big = Buffer.from(`${dir}/big`);
    execFileSync('mknod', [big.toString(), 'b', '300', '70000']);
    const rdev = (await lstat(big, { bigint: true })).rdev;
    assert.deepEqual([deviceMajor(rdev), deviceMinor(rdev)], [300, 70000]);
    await createSpecialFiles(dir, [{ path: Buffer.from(`${dir}/copy`), node: newNode(new Uint8Array(0), 'dev', { device: rdev }) }]);
    assert.equal((await lstat(`${dir}/copy`, { bigint: true })).rdev, rdev);
  });
});

test('refuses entries that are not special files', async () => {
  await assert.rejects(createSpecialFiles('/tmp', [{ path: Buffer.from('/tmp/x'), node: newNode(new Uint8Array(0), 'file') }]), /is a file, not a fifo, device or socket/);
});
