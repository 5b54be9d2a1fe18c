// The nodes a transfer may be pinned to under a per-node limit: Ready and schedulable. Read through the client
// library directly, as the shared kube layer's kind table has no Node.
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Node } from '@kubernetes/client-node';

export function usable(node: V1Node): boolean {
  if (node.spec?.unschedulable) return false;
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function nodeLister(kc: KubeConfig): () => Promise<string[]> {
  const api = kc.makeApiClient(CoreV1Api);
  return async () => {
    const list = await api.listNode();
    return list.items
      .filter(usable)
      .map((n) => n.metadata?.name ?? '')
      .filter(Boolean);
  };
}
