// Container logs as the node agent keeps them: <state>/nodes/logs/<namespace>/<pod>_<uid>/<container>/<run>.log,
// one CRI-format line per record ("<time> <stream> <F|P> <text>"). They outlive the pod, so a test can read the
// logs of a Job's pods after the Job is gone. Real nodes' kubelets write the same format into their podLogsDir,
// <state>/nodes/<node>/pod-logs/<namespace>_<pod>_<uid>/<container>/<run>.log, and remove it with the pod.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface LogQuery {
  /** the container; default: the only one with logs */
  container?: string;
  /** the run before the last restart */
  previous?: boolean;
}

/** The newest folder of the pod, the node agent's or any real node's. */
async function newestPodDir(nodesDir: string, namespace: string, pod: string): Promise<string | undefined> {
  const places = [{ dir: join(nodesDir, 'logs', namespace), prefix: `${pod}_` }];
  for (const node of await readdir(nodesDir).catch(() => [] as string[])) {
    places.push({ dir: join(nodesDir, node, 'pod-logs'), prefix: `${namespace}_${pod}_` });
  }
  const found: { path: string; t: number }[] = [];
  for (const { dir, prefix } of places) {
    for (const n of (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(prefix))) {
      found.push({ path: join(dir, n), t: (await stat(join(dir, n))).mtimeMs });
    }
  }
  return found.sort((a, b) => b.t - a.t)[0]?.path;
}

/** The text a pod's container wrote (stdout and stderr interleaved), of its newest pod by that name. */
export async function podLogs(nodesDir: string, namespace: string, pod: string, query: LogQuery = {}): Promise<string> {
  const podDir = await newestPodDir(nodesDir, namespace, pod);
  if (!podDir) throw new Error(`No logs for pod ${namespace}/${pod} in ${nodesDir}.`);
  const containers = await readdir(podDir);
  const container = query.container ?? (containers.length === 1 ? containers[0] : undefined);
  if (!container || !containers.includes(container)) {
    throw new Error(`Pod ${namespace}/${pod} has logs for containers ${containers.join(', ')}; name one of them.`);
  }
  const runs = (await readdir(join(podDir, container))).map((n) => Number.parseInt(n, 10)).sort((a, b) => a - b);
  const run = runs[runs.length - (query.previous ? 2 : 1)];
  if (run === undefined) throw new Error(`Container ${container} of pod ${namespace}/${pod} has no ${query.previous ? 'previous ' : ''}run.`);
  const raw = await readFile(join(podDir, container, `${run}.log`), 'utf8');
  let text = '';
  for (const line of raw.split('\n')) {
    const m = /^\S+ (?:stdout|stderr) ([FP]) (.*)$/.exec(line);
    if (m) text += m[1] === 'F' ? `${m[2]}\n` : m[2];
  }
  return text;
}
