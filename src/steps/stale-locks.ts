// Repository locks left by ferry step pods that died. A step pod's hostname is its pod name (Kubernetes, and the
// cluster in a box, set it so), and that name is the `hostname` of every lock the step takes. So a step can tell
// from the API whether a lock's holder still runs, and need not wait the engine's 30 minutes when it does not.
//
//   removeDeadStepLocks(kube, ferryNamespace, store, log?) -> RemovedLock[]
//     Call it just before taking a repository lock. It removes only locks whose holder is a ferry step pod in
//     ferryNamespace that has terminated (phase Succeeded or Failed) or no longer exists. A lock whose holder runs,
//     is not a ferry step pod (a person's restic, another tool), or cannot be looked up (no right to list pods, the
//     apiserver unreachable) is kept: the engine's own staleness rule (30 minutes, dead local pid) still applies.
//     It needs `list` on pods in ferryNamespace.
//
//   deadStepReason(hostname, pods) -> string
//     The decision alone, for a hostname and the ferry pods listed in ferryNamespace ('' keeps the lock).
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { removeLocksWhere, type LockStore, type RemovedLock } from '../engine/operations/unlock.ts';

export type { RemovedLock };

/** Pods of ferry's Jobs carry this label from the templates in jobs/. */
const ferryPodSelector = 'app.kubernetes.io/name=ferry';

/**
 * The pod name of a dispatched step Job: `ferry-<up|down>-<uid prefix>-<step>-<attempt>` (jobName in
 * shared/step-job/contract.ts) or a DataCopy's `ferry-copy-<uid prefix>-a<attempt>` (shared/copy/step.ts), or of a
 * maintenance Job made from a `ferry-maint-<task>-<location>` CronJob (steps/maintenance/cronjobs.ts), plus the Job
 * controller's 5-character suffix. Only such a name may be judged when its pod is gone; any other hostname might be
 * a machine outside the cluster.
 */
const stepPodName =
  /^ferry-((up|down)-[0-9a-f]{1,32}-[a-z]+-\d+|copy-[0-9a-f]{1,32}-a\d+|maint-(prune|check|check-data)-[a-z0-9.-]+)-[a-z0-9]{5}$/;

/** Kubernetes cuts a pod's hostname to 63 characters, dropping trailing dashes and dots. */
function hostnameOf(podName: string): string {
  return podName.length > 63 ? podName.slice(0, 63).replace(/[-.]+$/, '') : podName;
}

export function deadStepReason(hostname: string, pods: readonly KubeObject[]): string {
  const pod = pods.find((p) => hostnameOf(p.metadata.name) === hostname);
  if (pod) {
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    return phase === 'Succeeded' || phase === 'Failed'
      ? `its holder, step pod ${pod.metadata.name}, has ${phase === 'Failed' ? 'failed' : 'ended'}`
      : '';
  }
  return stepPodName.test(hostname) ? `its holder, step pod ${hostname}, no longer exists` : '';
}

export async function removeDeadStepLocks(
  kube: Kube,
  ferryNamespace: string,
  store: LockStore,
  log?: Logger,
): Promise<RemovedLock[]> {
  let pods: Promise<KubeObject[] | undefined> | undefined;
  // listed once, and only when there is a lock to judge: most of the time there is none
  const ferryPods = (): Promise<KubeObject[] | undefined> => {
    pods ??= kube.list('Pod', { namespace: ferryNamespace, labelSelector: ferryPodSelector }).catch((err: Error) => {
      log?.warn('cannot list the step pods, so no lock of a dead step is removed', { error: err.message });
      return undefined;
    });
    return pods;
  };
  const removed = await removeLocksWhere(store, async (info) => {
    const listed = await ferryPods();
    return listed ? deadStepReason(info.hostname, listed) : '';
  });
  for (const r of removed)
    log?.info('removed the repository lock of a dead step', { lock: r.id.slice(0, 8), reason: r.reason });
  return removed;
}
