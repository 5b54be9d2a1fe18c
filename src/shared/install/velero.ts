// The Velero component (deploy/velero) fitted to where ferry and Velero live: ferry's objects follow ferry's
// namespace as the rest of the install does, the Role, its binding and the webhook's namespace selector follow
// Velero's, and the dispatcher's pod template names Velero's namespace so that a change rolls the dispatcher
// (it reads the component's ConfigMap at start).
import type { KubeObject } from '../kube/kube.ts';
import { applyOverrides } from './kustomize.ts';

export const veleroAnnotation = 'ferry.dev/velero-namespace';

interface Places {
  namespace: string;
  veleroNamespace: string;
}

function fit(obj: KubeObject, { namespace, veleroNamespace }: Places): KubeObject {
  const inVelero = obj.kind === 'Role' || (obj.kind === 'RoleBinding' && obj.metadata.namespace === 'velero');
  const [moved] = applyOverrides([obj], { namespace });
  if (inVelero) {
    moved.metadata.namespace = veleroNamespace;
    if (moved.kind === 'RoleBinding') {
      for (const s of moved.subjects as { kind: string; namespace?: string }[]) {
        if (s.kind === 'ServiceAccount') s.namespace = namespace;
      }
    }
  }
  if (moved.kind === 'ConfigMap') (moved.data as Record<string, string>).FERRY_VELERO_NAMESPACE = veleroNamespace;
  if (moved.kind === 'ValidatingWebhookConfiguration') {
    const annotations = moved.metadata.annotations ?? {};
    if (annotations['cert-manager.io/inject-ca-from'])
      annotations['cert-manager.io/inject-ca-from'] = `${namespace}/ferry-dispatcher`;
    for (const hook of moved.webhooks as { namespaceSelector?: { matchLabels?: Record<string, string> } }[]) {
      hook.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': veleroNamespace } };
    }
  }
  return moved;
}

/** The install with the component added. */
export function veleroComponent(install: KubeObject[], component: KubeObject[], places: Places): KubeObject[] {
  const out = install.map((obj) => {
    if (obj.kind !== 'Deployment' || obj.metadata.name !== 'ferry-dispatcher') return obj;
    const copy = structuredClone(obj);
    const template = (copy.spec as { template: { metadata?: { annotations?: Record<string, string> } } }).template;
    template.metadata = {
      ...template.metadata,
      annotations: { ...template.metadata?.annotations, [veleroAnnotation]: places.veleroNamespace },
    };
    return copy;
  });
  return [...out, ...component.map((obj) => fit(obj, places))];
}
