// Where the apiserver is and who we are: the pod's ServiceAccount when running in a cluster, else KUBECONFIG
// (or ~/.kube/config). In a pod the ServiceAccount wins even if a kubeconfig happens to be around, so each step
// acts with exactly the rights its own ServiceAccount has.
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

const serviceAccountToken = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (!env.KUBECONFIG && env.KUBERNETES_SERVICE_HOST && existsSync(serviceAccountToken)) {
    kc.loadFromCluster();
  } else {
    try {
      kc.loadFromDefault();
    } catch (err) {
      throw new Error(
        `Cannot read the Kubernetes configuration (KUBECONFIG=${env.KUBECONFIG ?? '~/.kube/config'}): ${(err as Error).message}.`,
      );
    }
  }
  if (!kc.getCurrentCluster()) throw new Error('No Kubernetes cluster is configured: run in a pod or set KUBECONFIG.');
  return kc;
}
