// Where an exposed volume lets its transfer run: on the node it is tied to (local storage), anywhere (network
// storage, or a volume not provisioned yet), or somewhere only the scheduler can work out (zones and other
// topologies). Read from the claim and its PersistentVolume as the scheduler reads them.
import type { KubeObject } from '../shared/kube/kube.ts';
import type { ClusterNode } from './nodes.ts';

export interface VolumePlacement {
  /** the node the volume is tied to */
  node?: string;
  /** may ferry choose the node (pin the Job there)? */
  pinnable: boolean;
}

const selectedNode = 'volume.kubernetes.io/selected-node';

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

interface NodeSelectorTerm {
  matchExpressions?: Requirement[];
  matchFields?: Requirement[];
}

/** A node selector requirement against one value (undefined: the label is absent), as the scheduler reads it. */
function satisfies(r: Requirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const [n, bound] = [Number(value), Number(values[0])];
      if (value === undefined || !Number.isInteger(n) || !Number.isInteger(bound)) return false;
      return r.operator === 'Gt' ? n > bound : n < bound;
    }
    default:
      return false;
  }
}

/** A term holds when all its requirements do; an empty term selects no node. */
function termMatches(t: NodeSelectorTerm, node: ClusterNode): boolean {
  const labels = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (labels.length + fields.length === 0) return false;
  return (
    labels.every((r) => satisfies(r, node.labels[r.key])) &&
    fields.every((r) => satisfies(r, r.key === 'metadata.name' ? node.name : undefined))
  );
}

/** The one node a PersistentVolume's node affinity allows among the cluster's nodes, if only one. */
function affinityNode(pv: KubeObject, nodes: readonly ClusterNode[]): VolumePlacement {
  const terms = (pv.spec as { nodeAffinity?: { required?: { nodeSelectorTerms?: NodeSelectorTerm[] } } } | undefined)
    ?.nodeAffinity?.required?.nodeSelectorTerms;
  if (!terms?.length) return { pinnable: true };
  const allowed = nodes.filter((n) => terms.some((t) => termMatches(t, n)));
  return allowed.length === 1 ? { node: allowed[0].name, pinnable: false } : { pinnable: false };
}

/** `nodes`: every node of the cluster, usable or not (a volume stays tied to a cordoned node). */
export function volumePlacement(
  claim: KubeObject | undefined,
  pv: KubeObject | undefined,
  nodes: readonly ClusterNode[],
): VolumePlacement {
  const annotated = claim?.metadata.annotations?.[selectedNode];
  if (annotated) return { node: annotated, pinnable: false };
  return pv ? affinityNode(pv, nodes) : { pinnable: true };
}
