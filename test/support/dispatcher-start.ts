// Waits for a dispatcher pod the installer made to answer /readyz, and says why when it does not. The box runs
// every pod on the host's network, so a port found free a moment ago can be taken (any outgoing connection may be
// given it as its local port) before the dispatcher binds it; that one failure is told apart so the installer can
// pick new ports, and any other is reported with the pod's state, its log and the namespace's events.
import type { KubeObject } from '../cluster/kube.ts';

export type DispatcherStart = { ready: true } | { ready: false; portTaken: boolean; why: string };

interface Target {
  kubectl(args: string[]): Promise<string>;
  namespace: string;
  /** label selector of the install's pods */
  selector: string;
  /** the metrics port this start uses: /readyz is polled there, and it tells this start's pods from earlier ones */
  metricsPort: number;
}

export async function answersReady(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

async function podsOf(t: Target): Promise<KubeObject[]> {
  const list = JSON.parse(await t.kubectl(['get', 'pods', '-n', t.namespace, '-l', t.selector, '-o', 'json'])) as {
    items: KubeObject[];
  };
  return list.items.filter((pod) =>
    pod.spec.containers[0]?.env?.some(
      (e: KubeObject) => e.name === 'FERRY_METRICS_PORT' && e.value === String(t.metricsPort),
    ),
  );
}

/** The log of a container run that ended: the last run when it is down, else the one before its restart. */
async function endedRunLog(t: Target, pod: KubeObject): Promise<string | undefined> {
  const status = pod.status?.containerStatuses?.[0];
  if (!status) return undefined;
  const down = status.state?.terminated !== undefined;
  if (!down && !(status.restartCount > 0)) return undefined;
  const args = ['logs', '-n', t.namespace, pod.metadata.name, '--tail', '40', ...(down ? [] : ['--previous'])];
  return t.kubectl(args).catch((err: Error) => `(its log could not be read: ${err.message})`);
}

async function describe(t: Target, pods: KubeObject[]): Promise<string> {
  const lines = pods.map(
    (pod) =>
      `pod ${pod.metadata.name}: phase ${pod.status?.phase ?? 'unknown'}, node ${pod.spec.nodeName ?? 'none'}, container ${JSON.stringify(pod.status?.containerStatuses?.[0]?.state ?? {})}`,
  );
  if (!pods.length) lines.push(`no pod with FERRY_METRICS_PORT=${t.metricsPort} (selector ${t.selector})`);
  const events = await t
    .kubectl(['get', 'events', '-n', t.namespace, '--sort-by', '.lastTimestamp'])
    .catch((err: Error) => `(events could not be read: ${err.message})`);
  const logs = await Promise.all(
    pods.map((pod) => t.kubectl(['logs', '-n', t.namespace, pod.metadata.name, '--tail', '40']).catch(() => '')),
  );
  return [
    ...lines,
    'events:',
    events.trim().split('\n').slice(-20).join('\n'),
    'log:',
    logs.join('\n').trim() || '(empty)',
  ].join('\n');
}

export async function awaitDispatcher(t: Target, timeoutMs = 180_000): Promise<DispatcherStart> {
  const deadline = Date.now() + timeoutMs;
  for (let poll = 0; ; poll++) {
    if (await answersReady(t.metricsPort)) return { ready: true };
    if (poll % 4 === 3) {
      // a list that fails is tried again at the next poll: the apiserver may be busy
      for (const pod of await podsOf(t).catch(() => [])) {
        const log = await endedRunLog(t, pod);
        if (log !== undefined)
          return { ready: false, portTaken: /EADDRINUSE/.test(log), why: `its container stopped:\n${log.trim()}` };
      }
    }
    if (Date.now() > deadline)
      return {
        ready: false,
        portTaken: false,
        why: `not ready within ${timeoutMs / 1000} s:\n${await describe(t, await podsOf(t).catch(() => []))}`,
      };
    await new Promise((r) => setTimeout(r, 500));
  }
}
