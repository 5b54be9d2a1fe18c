// Extended attributes through getfattr / setfattr: the dump format, and real round trips on awkward names.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import fc from 'fast-check';
import { escapeDumpText, formatDump, parseDump, unescapeDumpText, XattrReader, xattrUnsupportedReason, XattrWriter } from '../../../src/shared/fsmeta/xattr.ts';
import type { ExtendedAttribute } from '../../../src/shared/tree/node.ts';
import { rawPath, withScratch } from './scratch.ts';

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));

test('dump text escaping is reversible for any bytes', () => {
  assert.equal(escapeDumpText(bytes('a b\\c=d\ne\x80')), 'a\\040b\\134c\\075d\\012e\\200');
  fc.assert(fc.property(fc.uint8Array({ maxLength: 30 }), (b) => assert.deepEqual(unescapeDumpText(escapeDumpText(b)), b)));
});

test('parses the dump getfattr prints', () => {
  const dump = Buffer.from('# file: /v/a\\012b\nuser.x=0sAP8K\nuser.e\\075q=0s\n\n# file: /v/c\xff\nsecurity.selinux=0sc3lzdGVt\n\n', 'latin1');
  const files = parseDump(dump);
  assert.deepEqual(files.get('/v/a\nb'), [{ name: 'user.x', value: bytes('\x00\xff\n') }, { name: 'user.e=q', value: new Uint8Array(0) }]);
  assert.deepEqual(files.get('/v/c\xff'), [{ name: 'security.selinux', value: bytes('system') }]);
  assert.equal(formatDump([{ path: bytes('/v/a\nb'), attrs: [{ name: 'user.x', value: bytes('\x00\xff\n') }] }]).toString('latin1'), '# file: /v/a\\012b\nuser.x=0sAP8K\n\n');
});

test('writes and reads back attributes, batching many files', async () => {
  await withScratch(async (dir) => {
    const attrs: ExtendedAttribute[] = [{ name: 'user.a=b', value: bytes('\x00\xff\n') }, { name: 'user.empty', value: new Uint8Array(0) }, { name: 'user.text', value: bytes('v') }];
    const names = ['plain', 'new\nline', 'back\\slash', 'sp ace', 'ü'].concat(Array.from({ length: 300 }, (_v, i) => `n${i}`));
    const paths = names.map((n) => Buffer.from(`${dir}/${n}`));
    const raw = rawPath(dir, bytes('raw\x80'));
    for (const p of [...paths, raw]) await writeFile(p, '');
    const writer = new XattrWriter();
    await Promise.all([...paths, raw].map((p) => writer.write(p, attrs)));
    const warnings: string[] = [];
    const reader = new XattrReader((w) => warnings.push(w));
    const read = await Promise.all(paths.map((p) => reader.read(p)));
    for (const r of read) assert.deepEqual(r, attrs);
    // a non-UTF-8 path cannot be handed to getfattr: no attributes and a warning, but setfattr wrote them
    assert.deepEqual(await reader.read(raw), []);
    assert.match(warnings.join('\n'), /raw.* were not read: the path is not valid UTF-8/);
    const all = parseDump(execFileSync('getfattr', ['--absolute-names', '-R', '-d', '-m', '-', '-e', 'base64', dir]));
    assert.deepEqual(all.get(raw.toString('latin1')), attrs);
  });
});

test('a failing file is reported without failing the others of its batch', async () => {
  await withScratch(async (dir) => {
    await writeFile(`${dir}/ok`, '');
    const writer = new XattrWriter();
    const [ok, missing] = await Promise.allSettled([
      writer.write(Buffer.from(`${dir}/ok`), [{ name: 'user.k', value: bytes('v') }]),
      writer.write(Buffer.from(`${dir}/missing`), [{ name: 'user.k', value: bytes('v') }]),
    ]);
    assert.equal(ok.status, 'fulfilled');
    assert.equal(missing.status, 'rejected');
    assert.match(String((missing as PromiseRejectedResult).reason), /could not set extended attributes on .*missing: No such file or directory/);
  });
});

test('support is probed per directory and explained when missing', async () => {
  await withScratch(async (dir) => {
    assert.equal(await xattrUnsupportedReason(dir), null);
    assert.match(String(await xattrUnsupportedReason(`${dir}/nowhere`)), /getfattr failed on .*nowhere: .*No such file/);
  });
});
