// The cluster a command talks to, as kubectl would choose it: --kubeconfig, else $KUBECONFIG, else ~/.kube/config
// (or the pod's ServiceAccount when run in a pod), with --context picking another context and -n the namespace.
// The user's own credentials and RBAC apply: the CLI wraps the API, it has no rights of its own.
import type { ArgsDef } from 'citty';
import { KubeConfig } from '@kubernetes/client-node';
import { HttpKube } from '../../shared/kube/client.ts';
import type { Kube } from '../../shared/kube/kube.ts';
import { UsageError } from '../run.ts';

export const kubeArgs = {
  kubeconfig: {
    type: 'string',
    description: 'kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)',
    valueHint: 'FILE',
  },
  context: { type: 'string', description: 'kubeconfig context (default: its current context)', valueHint: 'NAME' },
  namespace: {
    type: 'string',
    alias: 'n',
    description: 'namespace (default: the context\'s namespace, else "default")',
    valueHint: 'NS',
  },
  'ferry-namespace': {
    type: 'string',
    description: "ferry's own namespace, where its Jobs run (env FERRY_NAMESPACE, default ferry-system)",
    valueHint: 'NS',
  },
} as const satisfies ArgsDef;

export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  'ferry-namespace'?: string;
}

export interface CliKube {
  kube: Kube;
  /** for the few calls the Kube interface does not make (pod logs) */
  config: KubeConfig;
  /** the namespace the command works in */
  namespace: string;
  /** where ferry's Jobs, Job templates and storage locations are */
  ferryNamespace: string;
  close(): void;
}

/** The kubeconfig the flags and the environment choose, on the context they name. */
export function kubeConfigFrom(flags: KubeFlags): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (flags.kubeconfig) kc.loadFromFile(flags.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    const which = flags.kubeconfig
      ? `--kubeconfig ${flags.kubeconfig}`
      : `the kubeconfig (KUBECONFIG=${process.env.KUBECONFIG ?? '~/.kube/config'})`;
    throw new UsageError(`cannot read ${which}: ${(err as Error).message}`);
  }
  if (flags.context !== undefined) {
    const names = kc.getContexts().map((c) => c.name);
    if (!names.includes(flags.context))
      throw new UsageError(
        `--context ${flags.context} is not in the kubeconfig, which has: ${names.join(', ') || 'no contexts'}`,
      );
    kc.setCurrentContext(flags.context);
  }
  if (!kc.getCurrentCluster())
    throw new UsageError('the kubeconfig names no current cluster: pass --kubeconfig FILE or --context NAME');
  return kc;
}

export function openKube(flags: KubeFlags): CliKube {
  const config = kubeConfigFrom(flags);
  const http = new HttpKube(config);
  const contextNamespace = config.getContextObject(config.getCurrentContext())?.namespace;
  return {
    kube: http,
    config,
    namespace: flags.namespace || contextNamespace || 'default',
    ferryNamespace: flags['ferry-namespace'] || process.env.FERRY_NAMESPACE || 'ferry-system',
    close: () => http.close(),
  };
}

/** Runs `work` with a client that is closed afterwards, so the process can exit. */
export async function withKube<T>(flags: KubeFlags, work: (k: CliKube) => Promise<T>): Promise<T> {
  const k = openKube(flags);
  try {
    return await work(k);
  } finally {
    k.close();
  }
}
