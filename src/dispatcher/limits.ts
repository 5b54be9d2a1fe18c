// Concurrency limits for transfers, cluster-wide and per node, decided from what the cluster shows: a resource
// holds a slot while it is InProgress, or while its transfer Job runs before that. Waiting resources go oldest first, so every replica
// of the dispatcher (and the sweep) reaches the same answer from the same objects.

export interface TransferLimits {
  /** transfers at once in the cluster; 0: no limit */
  cluster: number;
  /** transfers at once on one node; 0: no limit */
  perNode: number;
}

export interface SlotHolder {
  uid: string;
  /** where its data moves, when known */
  node?: string;
}

export interface TransferCandidate {
  uid: string;
  /** creation time (RFC 3339): the older goes first */
  created: string;
  /** the node its volume is tied to, when known */
  node?: string;
  /** may ferry choose its node when none is known? (not when only the scheduler knows where the volume can go) */
  pinnable?: boolean;
}

export type Placement =
  { go: true; /** pin the Job here: set when ferry chose the node */ node?: string } | { go: false; reason: string };

export function limited(limits: TransferLimits): boolean {
  return limits.cluster > 0 || limits.perNode > 0;
}

function byAge(a: TransferCandidate, b: TransferCandidate): number {
  return a.created < b.created ? -1 : a.created > b.created ? 1 : a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/** The least busy node with room, by name among equals. */
function roomiest(nodes: readonly string[], load: Map<string, number>, perNode: number): string | undefined {
  let best: string | undefined;
  for (const node of [...nodes].sort()) {
    const n = load.get(node) ?? 0;
    if (n < perNode && (best === undefined || n < (load.get(best) ?? 0))) best = node;
  }
  return best;
}

/**
 * Where each candidate stands. A candidate that already holds a slot (a transfer being retried) keeps it.
 * `nodes` are the nodes a transfer may be pinned to when its own node is not known yet.
 */
export function placeTransfers(
  holders: readonly SlotHolder[],
  candidates: readonly TransferCandidate[],
  limits: TransferLimits,
  nodes: readonly string[],
): Map<string, Placement> {
  const placements = new Map<string, Placement>();
  const holding = new Set(holders.map((h) => h.uid));
  const load = new Map<string, number>();
  for (const h of holders) if (h.node) load.set(h.node, (load.get(h.node) ?? 0) + 1);
  let running = holding.size;
  for (const c of [...candidates].sort(byAge)) {
    if (holding.has(c.uid)) {
      placements.set(c.uid, { go: true });
      continue;
    }
    if (limits.cluster > 0 && running >= limits.cluster) {
      placements.set(c.uid, {
        go: false,
        reason: `${running} of ${limits.cluster} transfers allowed in the cluster are running`,
      });
      continue;
    }
    let pin: string | undefined;
    if (limits.perNode > 0 && c.node) {
      const n = load.get(c.node) ?? 0;
      if (n >= limits.perNode) {
        placements.set(c.uid, {
          go: false,
          reason: `${n} of ${limits.perNode} transfers allowed on node ${c.node} are running`,
        });
        continue;
      }
    } else if (limits.perNode > 0 && nodes.length > 0 && c.pinnable !== false) {
      pin = roomiest(nodes, load, limits.perNode);
      if (!pin) {
        placements.set(c.uid, { go: false, reason: `every node runs ${limits.perNode} transfers, the limit per node` });
        continue;
      }
    }
    const node = c.node ?? pin;
    if (node) load.set(node, (load.get(node) ?? 0) + 1);
    running++;
    placements.set(c.uid, pin ? { go: true, node: pin } : { go: true });
  }
  return placements;
}
