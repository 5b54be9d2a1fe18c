// Tree blobs: the exact bytes restic writes for hand-built nodes (expected JSON derived by hand from
// Go's rules), lossless round trips of arbitrary nodes, and decoding of what older restic wrote.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { arbitraryNode, uniqueSorted } from './arbitrary.ts';
import { utf8Bytes } from '../../../src/engine/tree/goutf8.ts';
import { goMode } from '../../../src/engine/tree/mode.ts';
import { newNode, sortNodes } from '../../../src/engine/tree/node.ts';
import type { TreeNode } from '../../../src/engine/tree/node.ts';
import { decodeTree, encodeTree, findNode, subtreeIds } from '../../../src/engine/tree/tree.ts';

const latin1 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const idA = 'ab'.repeat(32);
const idB = 'cd'.repeat(32);
const t0 = 1700000000000000000n;

function handBuiltNodes(): TreeNode[] {
  const file = newNode(latin1('a"b<c>\x80'), 'file', {
    mode: 0o644,
    mtime: { ns: t0 + 123456789n, offset: 3600 },
    atime: { ns: t0 + 123456789n, offset: 0 },
    ctime: { ns: t0, offset: 0 },
    uid: 1000,
    gid: 100,
    user: 'alice',
    group: 'users',
    inode: 18446744073709551615n,
    deviceId: 2049n,
    size: 5n,
    links: 1n,
    content: [idA],
  });
  const dir = newNode(utf8Bytes('d\te'), 'dir', {
    mode: (goMode.dir | goMode.sticky | 0o755) >>> 0,
    extendedAttributes: [{ name: 'user.k', value: utf8Bytes('v') }],
    genericAttributes: new Map([
      ['windows.b', '{ "x" : 1 }'],
      ['windows.a', '"<s>"'],
    ]),
    subtree: idB,
    error: 'bad \u2028',
  });
  const link = newNode(utf8Bytes('link'), 'symlink', {
    mode: (goMode.symlink | 0o777) >>> 0,
    linkTarget: latin1('t\x80<'),
  });
  return [file, dir, link];
}

test('encodes a tree to the bytes restic writes', () => {
  const zero = '"mtime":"0001-01-01T00:00:00Z","atime":"0001-01-01T00:00:00Z","ctime":"0001-01-01T00:00:00Z"';
  const expected =
    '{"nodes":[' +
    '{"name":"a\\\\\\"b\\u003cc\\u003e\\\\x80","type":"file","mode":420,"mtime":"2023-11-14T23:13:20.123456789+01:00",' +
    '"atime":"2023-11-14T22:13:20.123456789Z","ctime":"2023-11-14T22:13:20Z","uid":1000,"gid":100,"user":"alice","group":"users",' +
    `"inode":18446744073709551615,"device_id":2049,"size":5,"links":1,"content":["${idA}"]},` +
    `{"name":"d\\\\te","type":"dir","mode":2148532717,${zero},"uid":0,"gid":0,` +
    '"extended_attributes":[{"name":"user.k","value":"dg=="}],"generic_attributes":{"windows.a":"\\u003cs\\u003e","windows.b":{"x":1}},' +
    `"content":null,"subtree":"${idB}","error":"bad \\u2028"},` +
    `{"name":"link","type":"symlink","mode":134218239,${zero},"uid":0,"gid":0,"linktarget":"t\\ufffd\\u003c","linktarget_raw":"dIA8","content":null}` +
    ']}\n';
  assert.equal(text(encodeTree(handBuiltNodes())), expected);
});

test('decodes the hand-built tree back to the same nodes', () => {
  const nodes = handBuiltNodes();
  const decoded = decodeTree(encodeTree(nodes));
  nodes[1].genericAttributes = new Map([
    ['windows.a', '"\\u003cs\\u003e"'],
    ['windows.b', '{"x":1}'],
  ]);
  assert.deepEqual(decoded, nodes);
});

test('an empty directory is an empty node list', () => {
  assert.equal(text(encodeTree([])), '{"nodes":[]}\n');
  assert.deepEqual(decodeTree(utf8Bytes('{"nodes":[]}\n')), []);
  assert.deepEqual(decodeTree(utf8Bytes('{"nodes":null}')), []);
});

test('refuses unsorted, duplicate and empty names as restic does', () => {
  const a = newNode(utf8Bytes('a'), 'file');
  const b = newNode(utf8Bytes('b'), 'file');
  assert.throws(() => encodeTree([b, a]), /sorted by name without duplicates: "a" follows "b"/);
  assert.throws(() => encodeTree([a, a]), /without duplicates/);
  assert.throws(() => encodeTree([newNode(new Uint8Array(0), 'file')]), /empty name/);
  // bytewise order: "Z" (0x5a) before "a" (0x61) before 0xc3 (é)
  const sorted = sortNodes([newNode(utf8Bytes('é'), 'file'), a, newNode(utf8Bytes('Z'), 'file')]);
  assert.deepEqual(
    sorted.map((n) => text(n.name)),
    ['Z', 'a', 'é'],
  );
  assert.equal(findNode(sorted, utf8Bytes('é')), sorted[2]);
  assert.equal(findNode(sorted, utf8Bytes('b')), undefined);
});

test('decodes what older restic wrote and skips unknown fields', () => {
  // restic 0.14 shape: no linktarget_raw (lossy U+FFFD in linktarget), pretty whitespace tolerated
  const blob =
    '{ "nodes": [ {"name":"dir","type":"dir","mode":2147484141,"mtime":"2022-08-25T10:00:00.5+02:00","atime":"2022-08-25T10:00:00.5+02:00",' +
    '"ctime":"2022-08-25T10:00:00.5+02:00","uid":0,"gid":0,"user":"root","inode":131,"device_id":64769,"content":null,' +
    `"subtree":"${idA}","future_field":{"list":[1,2.5e3,true,false,null,"x\\"y"]}},` +
    '{"name":"l","type":"symlink","mode":134218239,"mtime":"2022-08-25T10:00:00Z","atime":"2022-08-25T10:00:00Z","ctime":"2022-08-25T10:00:00Z",' +
    '"uid":0,"gid":0,"linktarget":"x\\ufffd","links":1,"content":null} ] }\n';
  const [dir, link] = decodeTree(utf8Bytes(blob));
  assert.equal(dir.type, 'dir');
  assert.equal(dir.mode, (goMode.dir | 0o755) >>> 0);
  assert.equal(dir.mtime.offset, 7200);
  assert.equal(dir.subtree, idA);
  assert.equal(dir.inode, 131n);
  assert.deepEqual(link.linkTarget, utf8Bytes('x\ufffd'));
  assert.deepEqual(subtreeIds([dir, link]), [idA]);
});

test('reports malformed blobs clearly', () => {
  assert.throws(() => decodeTree(utf8Bytes('{"nodes":[{"name":"a"}]}')), /tree node "a" has no type/);
  assert.throws(() => decodeTree(utf8Bytes('{"nodes":[{"name":"a","type":"door"}]}')), /unknown type "door"/);
  assert.throws(() => decodeTree(utf8Bytes('{"nodes":[{"name":"a","type":"file","inode":-1}]}')), /"inode" holds -1/);
  assert.throws(
    () => decodeTree(utf8Bytes('{"nodes":[{"name":"a","type":"file","uid":4294967296}]}')),
    /32-bit unsigned/,
  );
  assert.throws(() => decodeTree(utf8Bytes('{"nodes":[{"name":"a","type":"file","size":1e3}]}')), /"size" holds 1e3/);
  assert.throws(() => decodeTree(utf8Bytes('{"nodes":[{"name":"a","type":"file","mode":4.5}]}')), /"mode" holds 4.5/);
  assert.throws(
    () => decodeTree(utf8Bytes('{"nodes":[{"name":"a","type":"file","size":18446744073709551616}]}')),
    /64-bit unsigned/,
  );
  assert.throws(
    () => decodeTree(utf8Bytes('{"nodes":[{"name":"a","type":"file","content":["xyz"]}]}')),
    /not a 64-digit hex id/,
  );
  assert.throws(() => decodeTree(utf8Bytes('{"nodes":[')), /tree blob is not valid JSON/);
  assert.throws(() => decodeTree(utf8Bytes('{"nodes":[]} x')), /expected the end of the document/);
});

test('any tree survives encode and decode unchanged, and re-encodes to the same bytes', () => {
  fc.assert(
    fc.property(fc.array(arbitraryNode, { maxLength: 6 }).map(uniqueSorted), (nodes) => {
      const blob = encodeTree(nodes);
      const decoded = decodeTree(blob);
      assert.deepEqual(decoded, nodes);
      assert.deepEqual(encodeTree(decoded), blob);
    }),
    { numRuns: 300 },
  );
});
