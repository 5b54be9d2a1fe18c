// Everything reachable from snapshots: the tree blobs and the data blobs they reference. Each tree is visited
// once however many snapshots share it, so the cost follows the repository's unique trees, not its history.
import type { ID } from '../ids/id.ts';
import { InvalidTreeError } from '../tree/validate.ts';
import type { TreeNode } from '../tree/node.ts';
import { decodeSnapshot } from '../snapshot/snapshot.ts';
import type { Repository } from './repository.ts';

export interface Reachable {
  /** called for each distinct tree, before its children */
  tree?(id: ID): void;
  /** called for every data blob reference (possibly repeatedly for shared blobs) */
  data?(id: ID): void;
  /**
   * Given, a tree that cannot be loaded or breaks restic's invariants is handed here and the walk goes on: below an
   * invalid tree through the entries it has, past an unreadable one. Not given, the walk rejects with the error.
   */
  fault?(id: ID, err: Error): void;
}

export async function loadSnapshotTrees(repo: Repository, signal?: AbortSignal): Promise<{ id: ID; tree: ID }[]> {
  const out: { id: ID; tree: ID }[] = [];
  for await (const id of repo.list('snapshot', signal)) {
    out.push({ id, tree: decodeSnapshot(await repo.loadUnpacked('snapshot', id, signal)).tree });
  }
  return out;
}

/** Walks trees depth first, each held to restic's invariants (Repository.loadTree); errors name the tree. */
export async function walkTrees(repo: Repository, roots: ID[], visit: Reachable, signal?: AbortSignal): Promise<void> {
  const seen = new Set<ID>();
  const stack = [...roots];
  while (stack.length > 0) {
    signal?.throwIfAborted();
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    visit.tree?.(id);
    for (const node of await loadTree(repo, id, visit, signal)) {
      if (node.subtree) stack.push(node.subtree);
      if (node.content) for (const blob of node.content) visit.data?.(blob);
    }
  }
}

async function loadTree(repo: Repository, id: ID, visit: Reachable, signal?: AbortSignal): Promise<TreeNode[]> {
  try {
    return await repo.loadTree(id, signal);
  } catch (err) {
    if (!visit.fault || signal?.aborted) throw err;
    visit.fault(id, err as Error);
    return err instanceof InvalidTreeError ? err.nodes : [];
  }
}
