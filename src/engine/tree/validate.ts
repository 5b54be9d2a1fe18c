// restic's invariants of a tree, checked wherever one is loaded: a tree comes from storage that an attacker (or a
// bad disk) may have written, and the code that restores, walks or prunes it relies on them. restic's tree builder
// refuses unsorted or repeated names and its checker flags directories without a subtree, files without a blob
// list and data blobs the index lacks; its restorer refuses names that are not a single path element.
import type { ID } from '../ids/id.ts';
import { compareNames, displayName } from './node.ts';
import type { TreeNode } from './node.ts';

export interface TreeFault {
  /** the entry's name as shown to people (JSON-quoted, so a NUL or newline shows) */
  entry: string;
  reason: string;
}

/** A tree that breaks an invariant. `nodes` are its decoded entries, so a walk that reports faults can go on. */
export class InvalidTreeError extends Error {
  readonly tree: ID;
  readonly faults: TreeFault[];
  readonly nodes: TreeNode[];

  constructor(tree: ID, faults: TreeFault[], nodes: TreeNode[]) {
    const listed = faults
      .slice(0, 3)
      .map((f) => `entry ${f.entry}: ${f.reason}`)
      .join('; ');
    const more = faults.length > 3 ? `; and ${faults.length - 3} more` : '';
    super(`tree ${tree} is invalid: ${listed}${more}`);
    this.tree = tree;
    this.faults = faults;
    this.nodes = nodes;
  }
}

const slash = 0x2f;
const dot = 0x2e;

/**
 * The faults of a tree's entries, in entry order (none: an empty list, allocated only when needed). `dataIndexed`,
 * when given, tells whether a data blob is in the index; without it, content ids are not looked up (a backup reading
 * its parent re-reads any file whose blobs are gone).
 */
export function treeFaults(nodes: readonly TreeNode[], dataIndexed?: (id: ID) => boolean): TreeFault[] {
  let faults: TreeFault[] | undefined;
  const add = (node: TreeNode, reason: string): void => {
    (faults ??= []).push({ entry: JSON.stringify(displayName(node.name)), reason });
  };
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    const bad = nameFault(node.name);
    if (bad) add(node, bad);
    if (i > 0) {
      const order = compareNames(nodes[i - 1].name, node.name);
      if (order === 0) add(node, 'the name appears twice in the directory');
      else if (order > 0)
        add(node, `names are not sorted: it follows ${JSON.stringify(displayName(nodes[i - 1].name))}`);
    }
    // another type with a subtree is left alone, as restic's checker leaves it: ferry before 2026-11-22 recorded a
    // symlinked folder above a backed-up path that way, and a restore never descends into anything but a directory
    if (node.type === 'dir' && node.subtree === null) add(node, 'a directory without a subtree');
    if (node.type === 'file') {
      if (node.content === null) add(node, 'a file without a list of data blobs');
      else if (dataIndexed)
        for (const id of node.content) if (!dataIndexed(id)) add(node, `data blob ${id} is not in the index`);
    }
  }
  return faults ?? noFaults;
}

const noFaults: TreeFault[] = [];

/** Why a name cannot be one entry of a directory, or undefined when it can. */
function nameFault(name: Uint8Array): string | undefined {
  if (name.length === 0) return 'an empty name';
  if (name[0] === dot && (name.length === 1 || (name.length === 2 && name[1] === dot)))
    return 'the name "." or ".." is not an entry';
  if (name.includes(slash)) return 'a name holding "/"';
  if (name.includes(0)) return 'a name holding a NUL byte';
  return undefined;
}

/** Throws InvalidTreeError naming `id` when the tree's entries break an invariant. */
export function validateTree(id: ID, nodes: TreeNode[], dataIndexed?: (id: ID) => boolean): TreeNode[] {
  const faults = treeFaults(nodes, dataIndexed);
  if (faults.length > 0) throw new InvalidTreeError(id, faults, nodes);
  return nodes;
}
