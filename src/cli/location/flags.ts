// Locations live in ferry's own namespace, so their commands take --ferry-namespace and no -n.
import type { ArgsDef } from 'citty';
import { kubeArgs } from '../resource/kube.ts';

export const locationKubeArgs = {
  kubeconfig: kubeArgs.kubeconfig,
  context: kubeArgs.context,
  'ferry-namespace': kubeArgs['ferry-namespace'],
} as const satisfies ArgsDef;
