// restic's tree invariants: which entries break them, how each is named, and what a valid tree costs to check.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newNode, type TreeNode } from '../../../src/engine/tree/node.ts';
import { InvalidTreeError, treeFaults, validateTree } from '../../../src/engine/tree/validate.ts';

const blob = 'ab'.repeat(32);
const other = 'cd'.repeat(32);
const tree = 'ef'.repeat(32);
const file = (name: string | Uint8Array, content: string[] | null = [blob]): TreeNode =>
  newNode(typeof name === 'string' ? Buffer.from(name) : name, 'file', { content });
const dir = (name: string, subtree: string | null = tree): TreeNode => newNode(Buffer.from(name), 'dir', { subtree });

test('a valid tree has no faults, whatever its names hold besides "/" and NUL', () => {
  const nodes = [
    file('...'),
    file('.hidden'),
    dir('a b'),
    newNode(Buffer.from('\u00e9'), 'symlink'),
    file(new Uint8Array([0xff, 0xfe])),
  ];
  assert.deepEqual(
    treeFaults(nodes, () => true),
    [],
  );
  assert.equal(validateTree(tree, nodes), nodes);
  assert.deepEqual(treeFaults([]), []);
});

test('each broken invariant names its entry, in entry order', () => {
  const nodes = [
    file(''),
    file('.'),
    file('..'),
    file('a\0b'),
    file('a/b'),
    dir('b', null),
    file('c', null),
    file('c'),
    newNode(Buffer.from('d'), 'symlink', { subtree: tree }),
    file('e', [blob, other]),
    file('a'),
  ];
  assert.deepEqual(
    treeFaults(nodes, (id) => id === blob).map((f) => `${f.entry}: ${f.reason}`),
    [
      '"": an empty name',
      '".": the name "." or ".." is not an entry',
      '"..": the name "." or ".." is not an entry',
      '"a\\u0000b": a name holding a NUL byte',
      '"a/b": a name holding "/"',
      '"b": a directory without a subtree',
      '"c": a file without a list of data blobs',
      '"c": the name appears twice in the directory',
      `"e": data blob ${other} is not in the index`,
      '"a": names are not sorted: it follows "e"',
    ],
  );
  // without an index, content ids are not looked up
  assert.equal(treeFaults([file('e', [other])]).length, 0);
});

test('the error names the tree and its first faults, and keeps the nodes for a walk that goes on', () => {
  const nodes = [file('x'), file('x'), file('x'), file('x'), file('x')];
  assert.throws(
    () => validateTree(tree, nodes),
    (err: unknown) => {
      assert.ok(err instanceof InvalidTreeError);
      assert.equal(
        err.message,
        `tree ${tree} is invalid: ${Array(3).fill('entry "x": the name appears twice in the directory').join('; ')}; and 1 more`,
      );
      assert.equal(err.tree, tree);
      assert.equal(err.nodes, nodes);
      return true;
    },
  );
});
