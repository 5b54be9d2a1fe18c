// Golden files recorded from real restic binaries (gen/restic-golden.ts): ferry must decode them and
// re-encode the very same bytes, so its tree ids equal restic's, and must read the awkward entries right.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { hashID } from '../../../src/engine/ids/id.ts';
import { decodeSnapshot, encodeSnapshot } from '../../../src/engine/snapshot/snapshot.ts';
import { goMode } from '../../../src/engine/tree/mode.ts';
import { decodeTree, encodeTree, findNode } from '../../../src/engine/tree/tree.ts';
import { goReencoded, lossyTarget, writesRawLinkTargets } from './restic/legacy.ts';

const fixtures = new URL('./fixtures/', import.meta.url);
const recorded = readdirSync(fixtures).filter((d) => d.startsWith('restic-'));
const latin1 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));

test('golden files exist for several restic versions', () => {
  assert.ok(recorded.length >= 3, recorded.join(', '));
});

for (const version of recorded) {
  const dir = new URL(`${version}/`, fixtures);
  const read = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, dir)));
  const trees = readdirSync(new URL('trees/', dir)).map((id) => [id, read(`trees/${id}`)] as const);
  const rawTargets = writesRawLinkTargets(trees.map(([, blob]) => blob));

  test(`${version}: snapshot and trees re-encode to identical bytes`, () => {
    const snapshot = read('snapshot.json');
    const sn = decodeSnapshot(snapshot);
    assert.deepEqual(encodeSnapshot(sn), snapshot);
    assert.deepEqual(sn.tags, ['x<y', 'pvc']);
    assert.equal(sn.hostname, 'ferry-test');
    const expected = rawTargets ? (blob: Uint8Array) => blob : goReencoded;
    for (const [id, blob] of trees) {
      assert.equal(hashID(blob), id, 'the file holds the blob restic stored under this id');
      assert.deepEqual(encodeTree(decodeTree(blob)), expected(blob), `tree ${id}`);
    }
  });

  test(`${version}: awkward entries decode to the right bytes and fields`, () => {
    const nodes = decodeTree(read(`trees/${readFileSync(new URL('root', dir), 'utf8').trim()}`));
    const get = (name: Uint8Array) => {
      const node = findNode(nodes, name);
      assert.ok(node, Buffer.from(name).toString('latin1'));
      return node;
    };
    assert.equal(get(latin1('inv\x80alid')).type, 'file');
    assert.equal(get(latin1('\xff\xfe')).size, 2n);
    for (const name of ['a"b', 'nl\nname', 'sep\u2028', 'unicode16\u{10d40}', 'emoji😀'])
      assert.equal(get(new Uint8Array(Buffer.from(name))).type, 'file', name);
    assert.deepEqual(get(latin1('link-raw')).linkTarget, rawTargets ? latin1('t\x80') : lossyTarget(latin1('t\x80')));
    assert.deepEqual(get(latin1('link-utf8')).linkTarget, new Uint8Array(Buffer.from('target/ü<>')));
    assert.deepEqual(get(latin1('plain.txt')).extendedAttributes, [
      { name: 'user.a', value: latin1('1') },
      { name: 'user.b', value: latin1('\x00\xff') },
    ]);
    assert.equal(get(latin1('setuid')).mode, goMode.setuid | 0o755);
    assert.equal(get(latin1('sub')).mode, (goMode.dir | goMode.setgid | goMode.sticky | 0o775) >>> 0);
    assert.equal(get(latin1('hard1')).links, 2n);
    assert.equal(get(latin1('pipe')).type, 'fifo');
    assert.equal(get(latin1('null-dev')).type, 'chardev');
    const old = get(latin1('old')).mtime.ns + 315619200123456000n;
    assert.ok(old > -1000n && old < 1000n, `mtime of old is off by ${old} ns`);
    assert.equal(get(latin1('owned')).user, '');
    assert.equal(get(latin1('owned')).uid, 4242);
  });
}
