// The JSON.parse fast path of tree decoding must agree with the exact pull reader whenever it answers, must answer
// for the plain blobs backups are made of, and must step aside for everything JSON.parse could read differently.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { arbitraryNode, uniqueSorted } from './arbitrary.ts';
import { decodeTreeFast } from '../../../src/engine/tree/fastdecode.ts';
import type { TreeNode } from '../../../src/engine/tree/node.ts';
import { decodeTree, decodeTreeExact, encodeTree } from '../../../src/engine/tree/tree.ts';

const text = (nodes: TreeNode[]): string => Buffer.from(encodeTree(nodes)).toString('utf8');
const safe = (n: bigint): bigint => n % 10n ** 15n;

const hex = (b: Uint8Array | string): string => Buffer.from(b).toString('hex');

/**
 * What a Linux backup without xattrs records: integers of at most 15 digits, no attributes, and text without the
 * few sequences (`[-`, `,1e`...) the fast path's screen cannot tell from numbers: those only cost the fallback, and
 * the property above covers them.
 */
const plainNode = arbitraryNode.map((n): TreeNode => ({
  ...n,
  inode: safe(n.inode),
  deviceId: safe(n.deviceId),
  size: safe(n.size),
  links: safe(n.links),
  device: safe(n.device),
  name: new TextEncoder().encode(hex(n.name)),
  user: hex(n.user),
  group: hex(n.group),
  error: hex(n.error),
  linkTarget: new TextEncoder().encode(hex(n.linkTarget)),
  extendedAttributes: [],
  genericAttributes: new Map(),
}));

test('whenever the fast path answers, it answers what the exact reader does', () => {
  fc.assert(
    fc.property(fc.array(arbitraryNode, { maxLength: 5 }).map(uniqueSorted), (nodes) => {
      const t = text(nodes);
      const fast = decodeTreeFast(t);
      if (fast !== undefined) assert.deepEqual(fast, decodeTreeExact(t));
    }),
    { numRuns: 300 },
  );
});

test('plain trees take the fast path and come back unchanged', () => {
  fc.assert(
    fc.property(fc.array(plainNode, { maxLength: 5 }).map(uniqueSorted), (nodes) => {
      assert.deepEqual(decodeTreeFast(text(nodes)), nodes);
    }),
    { numRuns: 300 },
  );
});

test('blobs JSON.parse could read differently go to the exact reader', () => {
  const node = (extra: string) =>
    `{"nodes":[{"name":"a","type":"file","mtime":"2024-05-01T10:00:00.5+02:00","uid":0,"gid":0${extra}}]}`;
  assert.notEqual(decodeTreeFast(node('')), undefined, 'the plain blob itself takes the fast path');
  const cases: [string, string][] = [
    ['an integer of 16 digits', node(',"inode":1234567890123456')],
    ['a negative number', node(',"inode":-1')],
    ['an exponent', node(',"size":1e3')],
    ['a fraction', node(',"mode":4.5')],
    ['an escaped lone surrogate', node(',"user":"\\ud800"')],
    ['generic attributes kept as source text', node(',"generic_attributes":{"k":1}')],
    ['extended attributes', node(',"extended_attributes":[{"name":"user.a","value":"YQ=="}]')],
    ['a raw link target', node(',"linktarget_raw":"YQ=="')],
    ['an upper-case id', node(`,"content":["${'AB'.repeat(32)}"]`)],
    ['a number in a list of ids', node(',"content":[1.0]')],
    ['an id one digit short', node(`,"content":["${'a'.repeat(63)}"]`)],
    ['a string where a number belongs', node(',"size":"5"')],
    ['an unknown type', '{"nodes":[{"name":"a","type":"door"}]}'],
    ['a second nodes list', '{"nodes":[{"name":"a","type":"file"}],"nodes":[{"name":"b","type":"file"}]}'],
    ['malformed JSON', '{"nodes":['],
  ];
  for (const [what, blob] of cases) assert.equal(decodeTreeFast(blob), undefined, what);
  // the exact reader still has the last word, through decodeTree
  assert.deepEqual(
    decodeTree(Buffer.from(node(',"user":"\\ud800"'))).map((n) => n.user),
    ['\ufffd'],
  );
  assert.equal(
    decodeTree(Buffer.from('{"nodes":[{"name":"a","type":"file"}],"nodes":[{"name":"b","type":"file"}]}')).length,
    2,
  );
  assert.throws(() => decodeTree(Buffer.from(node(',"size":1e3'))), /"size" holds 1e3/);
});
