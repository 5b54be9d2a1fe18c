// `ferry backup logs NAME` and `ferry restore logs NAME`: what every step Job of the resource printed, in step
// order, each pod under a header naming its step, attempt, Job and how it ended. Logs come through the apiserver
// (as `kubectl logs` reads them), with the user's rights. A step whose Job is gone (finalize removes the transfer's
// at once) gets a summary of what status kept of it instead.
import { defineCommand } from 'citty';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { isStepName, stepNames, type ResourceKind } from '../../shared/api/types.ts';
import { stepContainer } from '../../shared/step-job/contract.ts';
import { fetchOne } from '../resource/fetch.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { UsageError } from '../run.ts';
import { nameArg, nouns, type Resource } from './kinds.ts';
import { removedStepLines } from './removed-step.ts';
import { stepJobsOf, type JobRun, type PodRun } from './step-jobs.ts';

function header(j: JobRun, p: PodRun): string {
  const end = p.exitCode === undefined ? p.phase : `exit ${p.exitCode}${p.reason ? ` ${p.reason}` : ''}`;
  return `==> ${j.step} attempt ${j.attempt}: Job ${j.name}, pod ${p.name} (${end}) <==`;
}

async function podLog(config: KubeConfig, namespace: string, pod: string): Promise<string> {
  try {
    return await config
      .makeApiClient(CoreV1Api)
      .readNamespacedPodLog({ name: pod, namespace, container: stepContainer });
  } catch (err) {
    const e = err as { code?: number; body?: unknown; message?: string };
    const said = typeof e.body === 'string' ? (JSON.parse(e.body) as { message?: string }).message : e.message;
    return `(no logs: ${e.code ? `HTTP ${e.code}: ` : ''}${said ?? 'unknown error'})\n`;
  }
}

export function logsCommand(kind: ResourceKind) {
  return defineCommand({
    meta: { name: 'logs', description: `Print the logs of every step Job of a ${nouns[kind]}, in step order` },
    args: {
      name: nameArg(kind),
      step: { type: 'string', description: `only this step: ${stepNames.join(', ')}`, valueHint: 'STEP' },
      ...kubeArgs,
    },
    async run({ args }) {
      const name = objectName(args.name, 'NAME');
      if (args.step !== undefined && !isStepName(args.step))
        throw new UsageError(`--step ${args.step} is not a step; use one of: ${stepNames.join(', ')}`);
      await withKube(args, async ({ kube, config, namespace, ferryNamespace }) => {
        const r = await fetchOne<Resource>(kube, kind, namespace, name);
        const jobs = await stepJobsOf(kube, ferryNamespace, r);
        const shown = stepNames.filter((s) => args.step === undefined || s === args.step);
        const pods = jobs.filter((j) => shown.includes(j.step)).flatMap((j) => j.pods.map((p) => ({ j, p })));
        const removed = new Map(shown.map((s) => [s, removedStepLines(r, jobs, s)]));
        if (pods.length === 0 && [...removed.values()].every((lines) => lines.length === 0)) {
          throw new Error(
            `${kind} ${namespace}/${name} has no step pods${args.step ? ` of step ${args.step}` : ''} left in ${ferryNamespace} (finished Jobs are removed an hour after they end).`,
          );
        }
        for (const step of shown) {
          for (const { j, p } of pods.filter((x) => x.j.step === step)) {
            const text = await podLog(config, ferryNamespace, p.name);
            process.stdout.write(`${header(j, p)}\n${text}${text.endsWith('\n') || text === '' ? '' : '\n'}`);
          }
          for (const line of removed.get(step)!) process.stdout.write(`${line}\n`);
        }
      });
    },
  });
}
