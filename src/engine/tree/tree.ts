// A tree blob: one directory's entries as `{"nodes":[...]}` plus a newline, exactly the bytes restic's
// tree builder writes, so the blob id (SHA-256 of these bytes) matches restic's for the same directory.
import { utf8Bytes } from './goutf8.ts';
import { decodeTreeFast } from './fastdecode.ts';
import { JsonReader } from './jsonreader.ts';
import { compareNames, displayName } from './node.ts';
import type { TreeNode } from './node.ts';
import { decodeNode, encodeNode } from './nodejson.ts';

/** Encodes a directory's nodes, which must be sorted by name bytes without duplicates (restic checks the same). */
export function encodeTree(nodes: readonly TreeNode[]): Uint8Array {
  const parts: string[] = new Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) {
    const name = nodes[i].name;
    if (name.length === 0) throw new Error('a tree node has an empty name');
    if (i > 0 && compareNames(nodes[i - 1].name, name) >= 0) {
      throw new Error(
        `tree nodes must be sorted by name without duplicates: "${displayName(name)}" follows "${displayName(nodes[i - 1].name)}"`,
      );
    }
    parts[i] = encodeNode(nodes[i]);
  }
  return utf8Bytes(`{"nodes":[${parts.join(',')}]}\n`);
}

/** Decodes a tree blob written by restic (0.14 to 0.18) or by encodeTree. */
export function decodeTree(blob: Uint8Array): TreeNode[] {
  const text = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString('utf8');
  return decodeTreeFast(text) ?? decodeTreeExact(text);
}

/** The pull reader: exact for every blob restic may write, and precise about malformed ones. */
export function decodeTreeExact(text: string): TreeNode[] {
  const reader = new JsonReader(text, 'tree blob');
  const nodes: TreeNode[] = [];
  reader.readObject((key) => {
    if (key !== 'nodes') return reader.skip();
    if (!reader.readNull()) reader.readArray(() => nodes.push(decodeNode(reader)));
  });
  reader.end();
  return nodes;
}

/** Ids of the subtrees a tree refers to, in node order. */
export function subtreeIds(nodes: readonly TreeNode[]): string[] {
  const ids: string[] = [];
  for (const node of nodes) if (node.type === 'dir' && node.subtree !== null) ids.push(node.subtree);
  return ids;
}

/** Binary search by exact name bytes in a sorted node list. */
export function findNode(nodes: readonly TreeNode[], name: Uint8Array): TreeNode | undefined {
  let lo = 0;
  let hi = nodes.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = compareNames(nodes[mid].name, name);
    if (c === 0) return nodes[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}
