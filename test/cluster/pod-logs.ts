// Container logs as `ferrybox keep-logs` keeps them: <state>/nodes/logs/<namespace>/<pod>_<uid>/<container>/<run>.log,
// one CRI-format line per record ("<time> <stream> <F|P> <text>"). They outlive the pod, so a test can read the
// logs of a Job's pods after the Job is gone.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface LogQuery {
  /** the container; default: the only one with logs */
  container?: string;
  /** the run before the last restart */
  previous?: boolean;
}

async function newest(dir: string, prefix: string): Promise<string | undefined> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(prefix));
  const dated = await Promise.all(names.map(async (n) => ({ n, t: (await stat(join(dir, n))).mtimeMs })));
  return dated.sort((a, b) => b.t - a.t)[0]?.n;
}

/** The text a pod's container wrote (stdout and stderr interleaved), of its newest pod by that name. */
export async function podLogs(nodesDir: string, namespace: string, pod: string, query: LogQuery = {}): Promise<string> {
  const nsDir = join(nodesDir, 'logs', namespace);
  const podDir = await newest(nsDir, `${pod}_`);
  if (!podDir) throw new Error(`No logs for pod ${namespace}/${pod} in ${nsDir}.`);
  const containers = await readdir(join(nsDir, podDir));
  const container = query.container ?? (containers.length === 1 ? containers[0] : undefined);
  if (!container || !containers.includes(container)) {
    throw new Error(`Pod ${namespace}/${pod} has logs for containers ${containers.join(', ')}; name one of them.`);
  }
  const runs = (await readdir(join(nsDir, podDir, container))).map((n) => Number.parseInt(n, 10)).sort((a, b) => a - b);
  const run = runs[runs.length - (query.previous ? 2 : 1)];
  if (run === undefined)
    throw new Error(
      `Container ${container} of pod ${namespace}/${pod} has no ${query.previous ? 'previous ' : ''}run.`,
    );
  const raw = await readFile(join(nsDir, podDir, container, `${run}.log`), 'utf8');
  let text = '';
  for (const line of raw.split('\n')) {
    const m = /^\S+ (?:stdout|stderr) ([FP]) (.*)$/.exec(line);
    if (m) text += m[1] === 'F' ? `${m[2]}\n` : m[2];
  }
  return text;
}
