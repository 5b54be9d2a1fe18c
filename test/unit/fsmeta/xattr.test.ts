// Extended attributes through the system calls: real round trips on awkward names and values, in the file system's
// order, on paths that are not UTF-8, and without following symlinks.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { symlink, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { XattrReader, xattrUnsupportedReason } from '../../../src/engine/fsmeta/xattr.ts';
import { setXattrOf } from '../../../src/engine/sys/xattrs.ts';
import type { ExtendedAttribute } from '../../../src/engine/tree/node.ts';
import { rawPath, withScratch } from './scratch.ts';

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));

test('writes and reads back attributes with any bytes, on any path, in the order getfattr lists them', async () => {
  await withScratch(async (dir) => {
    const attrs: ExtendedAttribute[] = [
      { name: 'user.a=b', value: bytes('\x00\xff\n') },
      { name: 'user.empty', value: new Uint8Array(0) },
      { name: 'user.ü', value: bytes('v') },
    ];
    for (const path of [Buffer.from(`${dir}/new\nline`), rawPath(dir, bytes('raw\x80'))]) {
      await writeFile(path, '');
      for (const a of attrs) setXattrOf(path, a.name, a.value!);
      const read = await new XattrReader().read(path);
      assert.deepEqual(new Set(read.map((a) => a.name)), new Set(attrs.map((a) => a.name)));
      for (const a of read) assert.deepEqual(a.value, attrs.find((b) => b.name === a.name)!.value);
    }
    // the same names getfattr (another reader) lists, and a value set with setfattr reads back
    await writeFile(`${dir}/plain`, '');
    execFileSync('setfattr', ['-n', 'user.color', '-v', 'blue', `${dir}/plain`]);
    assert.deepEqual(await new XattrReader().read(Buffer.from(`${dir}/plain`)), [
      { name: 'user.color', value: bytes('blue') },
    ]);
  });
});

test("a symlink's attributes are its own: the file it points to is neither read nor written", async () => {
  await withScratch(async (dir) => {
    await writeFile(`${dir}/target`, '');
    setXattrOf(Buffer.from(`${dir}/target`), 'user.t', bytes('1'));
    await symlink('target', `${dir}/link`);
    assert.deepEqual(await new XattrReader().read(Buffer.from(`${dir}/link`)), []);
    // user.* attributes are not allowed on symlinks: the call fails rather than reaching the target
    assert.throws(() => setXattrOf(Buffer.from(`${dir}/link`), 'user.x', bytes('2')), /EPERM/);
    assert.deepEqual(await new XattrReader().read(Buffer.from(`${dir}/target`)), [
      { name: 'user.t', value: bytes('1') },
    ]);
  });
});

test('support is probed per directory and explained when missing; an unreadable file warns', async () => {
  await withScratch(async (dir) => {
    assert.equal(await xattrUnsupportedReason(dir), null);
    assert.match(
      String(await xattrUnsupportedReason(`${dir}/nowhere`)),
      /cannot read extended attributes of .*nowhere: ENOENT/,
    );
    const warnings: string[] = [];
    assert.deepEqual(await new XattrReader((w) => warnings.push(w)).read(Buffer.from(`${dir}/nowhere`)), []);
    assert.match(warnings.join('\n'), /nowhere were not read: ENOENT/);
  });
});
