// sameNode/sameNodes decide whether an incremental backup may reuse a parent's tree id, so they must never call two
// nodes equal that encode differently, and must see a change in any one field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { arbitraryNode, uniqueSorted } from './arbitrary.ts';
import type { TreeNode } from '../../../src/engine/tree/node.ts';
import { sameNode, sameNodes } from '../../../src/engine/tree/same.ts';
import { decodeTree, encodeTree } from '../../../src/engine/tree/tree.ts';

const text = (nodes: TreeNode[]): string => Buffer.from(encodeTree(nodes)).toString('latin1');
const fields = Object.keys(fc.sample(arbitraryNode, 1)[0]) as (keyof TreeNode)[];

test('a decoded copy of a tree is the same as the nodes it was encoded from', () => {
  fc.assert(
    fc.property(fc.array(arbitraryNode, { maxLength: 5 }).map(uniqueSorted), (nodes) => {
      assert.equal(sameNodes(nodes, decodeTree(encodeTree(nodes))), true);
    }),
    { numRuns: 200 },
  );
});

test('a node with one field replaced is the same exactly when it encodes to the same bytes', () => {
  fc.assert(
    fc.property(arbitraryNode, arbitraryNode, fc.constantFrom(...fields), (a, other, field) => {
      const b = { ...a, [field]: other[field] } as TreeNode;
      assert.equal(sameNode(a, b), text([a]) === text([b]), `field ${field}`);
    }),
    { numRuns: 600 },
  );
});

test('lists differ when a node is added, removed or reordered', () => {
  fc.assert(
    fc.property(fc.array(arbitraryNode, { minLength: 2, maxLength: 5 }).map(uniqueSorted), (nodes) => {
      fc.pre(nodes.length >= 2);
      assert.equal(sameNodes(nodes, nodes.slice(1)), false);
      assert.equal(sameNodes(nodes.slice(1), nodes), false);
      assert.equal(sameNodes(nodes, [nodes[1], nodes[0], ...nodes.slice(2)]), false);
    }),
    { numRuns: 100 },
  );
});
