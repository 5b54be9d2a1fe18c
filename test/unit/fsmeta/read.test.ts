// nodeFromStat on real entries: every field restic records, checked against lstat.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, link, lstat, mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { IdNames } from '../../../src/engine/fsmeta/idnames.ts';
import { nodeFromStat } from '../../../src/engine/fsmeta/read.ts';
import type { ReadOptions } from '../../../src/engine/fsmeta/read.ts';
import { XattrReader } from '../../../src/engine/fsmeta/xattr.ts';
import { localTime } from '../../../src/engine/tree/gotime.ts';
import { goMode } from '../../../src/engine/tree/mode.ts';
import { rawPath, withScratch } from './scratch.ts';

const uid = process.geteuid?.() ?? 0;
const gid = process.getegid?.() ?? 0;
const names = new IdNames(`me:x:${uid}:${gid}::/:/bin/sh\n`, `us:x:${gid}:\n`);

async function read(path: Buffer, opts: ReadOptions = {}) {
  const name = path.subarray(path.lastIndexOf(0x2f) + 1);
  return nodeFromStat(new Uint8Array(name), await lstat(path, { bigint: true }), path, { names, ...opts });
}

test('a file records mode, times, owner, inode, size and links', async () => {
  await withScratch(async (dir) => {
    const path = rawPath(dir, Buffer.from('f\x80', 'latin1'));
    await writeFile(path, 'hello');
    await chmod(path, 0o4750);
    await link(path, `${dir}/hard`);
    const st = await lstat(path, { bigint: true });
    const node = await read(path, { withAtime: true });
    assert.deepEqual(node.name, new Uint8Array(Buffer.from('f\x80', 'latin1')));
    assert.equal(node.type, 'file');
    assert.equal(node.mode, goMode.setuid | 0o750);
    assert.deepEqual(
      [node.mtime, node.atime, node.ctime],
      [localTime(st.mtimeNs), localTime(st.atimeNs), localTime(st.ctimeNs)],
    );
    assert.equal(node.mtime.ns % 1_000_000_000n, st.mtimeNs % 1_000_000_000n);
    assert.deepEqual([node.uid, node.gid, node.user, node.group], [uid, gid, 'me', 'us']);
    assert.deepEqual([node.inode, node.deviceId, node.size, node.links], [st.ino, st.dev, 5n, 2n]);
    assert.deepEqual([node.content, node.subtree, node.extendedAttributes], [null, null, []]);
  });
});

test('atime is the mtime and st_dev is kept for hard links only, when asked, as restic does', async () => {
  await withScratch(async (dir) => {
    await writeFile(`${dir}/one`, '');
    await writeFile(`${dir}/two`, '');
    await link(`${dir}/two`, `${dir}/two-again`);
    await utimes(`${dir}/one`, 1000, 2000);
    const st = await lstat(`${dir}/one`, { bigint: true });
    const plain = await read(Buffer.from(`${dir}/one`));
    assert.deepEqual(
      [plain.atime, plain.mtime, plain.deviceId],
      [localTime(st.mtimeNs), localTime(st.mtimeNs), st.dev],
    );
    assert.equal((await read(Buffer.from(`${dir}/one`), { withAtime: true })).atime.ns, 1000n * 1_000_000_000n);
    const only = { deviceIdOnlyForHardlinks: true };
    assert.equal((await read(Buffer.from(`${dir}/one`), only)).deviceId, 0n);
    assert.equal((await read(Buffer.from(dir), only)).deviceId, 0n);
    assert.equal((await read(Buffer.from(`${dir}/two`), only)).deviceId, st.dev);
  });
});

test('a directory, a symlink with a non-UTF-8 target and a fifo', async () => {
  await withScratch(async (dir) => {
    await mkdir(`${dir}/d`);
    await chmod(`${dir}/d`, 0o3775);
    const target = Buffer.from('t\x80rget', 'latin1');
    await symlink(target, `${dir}/l`);
    execFileSync('mkfifo', [`${dir}/p`]);
    const d = await read(Buffer.from(`${dir}/d`));
    assert.equal(d.type, 'dir');
    assert.equal(d.mode, (goMode.dir | goMode.setgid | goMode.sticky | 0o775) >>> 0);
    assert.deepEqual([d.size, d.links], [0n, 0n]);
    const l = await read(Buffer.from(`${dir}/l`));
    assert.equal(l.type, 'symlink');
    assert.deepEqual(l.linkTarget, new Uint8Array(target));
    assert.equal(l.links, 1n);
    const p = await read(Buffer.from(`${dir}/p`));
    assert.equal(p.type, 'fifo');
    assert.deepEqual([p.links, p.size, p.device], [0n, 0n, 0n]);
  });
});

test('a character device records st_rdev', async () => {
  const node = await read(Buffer.from('/dev/null'));
  assert.equal(node.type, 'chardev');
  assert.equal(node.device, (await lstat('/dev/null', { bigint: true })).rdev);
  assert.notEqual(node.device, 0n);
});

test('extended attributes are read when a reader is given', async () => {
  await withScratch(async (dir) => {
    await writeFile(`${dir}/x`, '');
    execFileSync('setfattr', ['-n', 'user.color', '-v', 'blue', `${dir}/x`]);
    assert.deepEqual((await read(Buffer.from(`${dir}/x`), { xattrs: new XattrReader() })).extendedAttributes, [
      { name: 'user.color', value: new Uint8Array(Buffer.from('blue')) },
    ]);
    assert.deepEqual((await read(Buffer.from(`${dir}/x`))).extendedAttributes, []);
  });
});
