// Shared fast-check arbitraries. Strings are built from code points directly: fast-check's own
// full-Unicode string unit spends seconds of CPU on its first use.
import fc from 'fast-check';
import { goCompactJson } from '../../../src/engine/tree/gojson.ts';
import { nodeTypes, sortNodes } from '../../../src/engine/tree/node.ts';
import type { TreeNode } from '../../../src/engine/tree/node.ts';

/** Any Unicode scalar value (no surrogates, which a Go string cannot hold either). */
export const codePoint = fc.integer({ min: 0, max: 0x10ffff - 0x800 }).map((c) => (c >= 0xd800 ? c + 0x800 : c));

export function unicodeString(maxLength: number): fc.Arbitrary<string> {
  return fc.array(codePoint, { maxLength }).map((cs) => String.fromCodePoint(...cs));
}

/** A blob or tree id: 64 lowercase hex digits. */
export const hexId: fc.Arbitrary<string> = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((b) => Buffer.from(b).toString('hex'));

const goTime = fc.record(
  {
    ns: fc.bigInt({ min: -62135596800n * 1_000_000_000n, max: 253402214400n * 1_000_000_000n }),
    offset: fc.integer({ min: -14 * 60, max: 14 * 60 }).map((m) => m * 60),
  },
  { noNullPrototype: true },
);
const uint64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const goString = unicodeString(12);
const rawJson = fc.jsonValue({ maxDepth: 2 }).map((v) => goCompactJson(JSON.stringify(v)));

/** Any node a tree blob can hold, with times in whole-minute zones as Go keeps them. */
export const arbitraryNode: fc.Arbitrary<TreeNode> = fc.record(
  {
    name: fc.uint8Array({ minLength: 1, maxLength: 16 }),
    type: fc.constantFrom(...nodeTypes),
    mode: fc.nat({ max: 0xffffffff }),
    mtime: goTime,
    atime: goTime,
    ctime: goTime,
    uid: fc.nat({ max: 0xffffffff }),
    gid: fc.nat({ max: 0xffffffff }),
    user: goString,
    group: goString,
    inode: uint64,
    deviceId: uint64,
    size: uint64,
    links: uint64,
    linkTarget: fc.uint8Array({ maxLength: 16 }),
    extendedAttributes: fc.array(
      fc.record(
        { name: goString, value: fc.option(fc.uint8Array({ maxLength: 8 }), { nil: null }) },
        { noNullPrototype: true },
      ),
      { maxLength: 3 },
    ),
    genericAttributes: fc.array(fc.tuple(goString, rawJson), { maxLength: 3 }).map((entries) => new Map(entries)),
    device: uint64,
    content: fc.option(fc.array(hexId, { maxLength: 3 }), { nil: null }),
    subtree: fc.option(hexId, { nil: null }),
    error: goString,
  },
  { noNullPrototype: true },
);

/** Nodes as a tree holds them: unique names in byte order. */
export function uniqueSorted(nodes: TreeNode[]): TreeNode[] {
  const seen = new Set<string>();
  return sortNodes(
    nodes.filter(
      (n) => !seen.has(Buffer.from(n.name).toString('hex')) && seen.add(Buffer.from(n.name).toString('hex')),
    ),
  );
}
