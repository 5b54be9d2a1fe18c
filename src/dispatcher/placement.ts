// Where an exposed volume lets its transfer run: on the node it is tied to (local storage), anywhere (network
// storage, or a volume not provisioned yet), or somewhere only the scheduler can work out (zones and other
// topologies). Read from the claim and its PersistentVolume as the scheduler reads them.
import type { KubeObject } from '../shared/kube/kube.ts';
import { hostnameLabel } from '../shared/step-job/contract.ts';

export interface VolumePlacement {
  /** the node the volume is tied to */
  node?: string;
  /** may ferry choose the node (pin the Job there)? */
  pinnable: boolean;
}

const selectedNode = 'volume.kubernetes.io/selected-node';

interface NodeSelectorTerm {
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** The one node a PersistentVolume's node affinity allows, if it names exactly one by host name. */
function affinityNode(pv: KubeObject): VolumePlacement {
  const terms = (pv.spec as { nodeAffinity?: { required?: { nodeSelectorTerms?: NodeSelectorTerm[] } } } | undefined)
    ?.nodeAffinity?.required?.nodeSelectorTerms;
  if (!terms?.length) return { pinnable: true };
  const hosts = terms
    .flatMap((t) => t.matchExpressions ?? [])
    .filter((e) => e.key === hostnameLabel && e.operator === 'In')
    .flatMap((e) => e.values ?? []);
  return terms.length === 1 && hosts.length === 1 ? { node: hosts[0], pinnable: false } : { pinnable: false };
}

export function volumePlacement(claim: KubeObject | undefined, pv: KubeObject | undefined): VolumePlacement {
  const annotated = claim?.metadata.annotations?.[selectedNode];
  if (annotated) return { node: annotated, pinnable: false };
  return pv ? affinityNode(pv) : { pinnable: true };
}
