// The cluster's nodes as transfer placement needs them: their labels, which a local volume's node affinity names
// (kubernetes.io/hostname, or a CSI driver's own topology key), and whether a transfer may be pinned there (Ready
// and schedulable). Read through the client library directly, as the shared kube layer's kind table has no Node.
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Node } from '@kubernetes/client-node';

export interface ClusterNode {
  name: string;
  labels: Record<string, string>;
  /** Ready and schedulable: a transfer may be pinned here */
  usable: boolean;
}

function usable(node: V1Node): boolean {
  if (node.spec?.unschedulable) return false;
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function nodeLister(kc: KubeConfig): () => Promise<ClusterNode[]> {
  const api = kc.makeApiClient(CoreV1Api);
  return async () => {
    const list = await api.listNode();
    return list.items
      .filter((n) => n.metadata?.name)
      .map((n) => ({ name: n.metadata!.name!, labels: n.metadata?.labels ?? {}, usable: usable(n) }));
  };
}
