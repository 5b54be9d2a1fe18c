// Everything reachable from snapshots: the tree blobs and the data blobs they reference. Each tree is visited
// once however many snapshots share it, so the cost follows the repository's unique trees, not its history.
import type { ID } from '../ids/id.ts';
import { decodeTree } from '../tree/tree.ts';
import { decodeSnapshot } from '../snapshot/snapshot.ts';
import type { Repository } from './repository.ts';

export interface Reachable {
  /** called for each distinct tree, before its children */
  tree?(id: ID): void;
  /** called for every data blob reference (possibly repeatedly for shared blobs) */
  data?(id: ID): void;
}

export async function loadSnapshotTrees(repo: Repository, signal?: AbortSignal): Promise<{ id: ID; tree: ID }[]> {
  const out: { id: ID; tree: ID }[] = [];
  for await (const id of repo.list('snapshot', signal)) {
    out.push({ id, tree: decodeSnapshot(await repo.loadUnpacked('snapshot', id, signal)).tree });
  }
  return out;
}

/** Walks trees depth first. A tree that cannot be loaded rejects, naming it; `check` catches that per tree. */
export async function walkTrees(repo: Repository, roots: ID[], visit: Reachable, signal?: AbortSignal): Promise<void> {
  const seen = new Set<ID>();
  const stack = [...roots];
  while (stack.length > 0) {
    signal?.throwIfAborted();
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    visit.tree?.(id);
    for (const node of decodeTree(await repo.loadBlob('tree', id, signal))) {
      if (node.subtree) stack.push(node.subtree);
      if (node.content) for (const blob of node.content) visit.data?.(blob);
    }
  }
}
