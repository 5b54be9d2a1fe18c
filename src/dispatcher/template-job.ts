// Creating one attempt's Job of a long-running step (an AppBackup's, an AppRestore's, a DataCopy's) from its
// template CronJob, read at dispatch time so an edit in Git applies to the next Job; a Job of that name already
// there is success (two webhooks or sweeps racing make one Job). Each start is counted in the dispatch metric.
import type { StartResult } from '../shared/dispatch/start.ts';
import { describe } from '../shared/dispatch/status.ts';
import { isAlreadyExists } from '../shared/kube/errors.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import type { DispatcherMetrics } from './metrics.ts';

export interface TemplateJobDeps {
  kube: Kube;
  /** ferry's namespace: the templates and the Jobs */
  namespace: string;
  log: Logger;
  metrics?: DispatcherMetrics;
}

export async function startTemplateJob(
  deps: TemplateJobDeps,
  r: KubeObject,
  step: { name: string; template: string },
  build: (cronJob: KubeObject) => KubeObject | Promise<KubeObject>,
): Promise<StartResult> {
  const { kube, namespace } = deps;
  const cronJob = await kube.get<KubeObject>({ kind: 'CronJob', namespace, name: step.template });
  if (!cronJob)
    throw new Error(
      `The Job template CronJob ${namespace}/${step.template} does not exist; install jobs/ from ferry's deploy/ kustomization.`,
    );
  const job = await build(cronJob);
  const counted = (result: StartResult): StartResult => {
    deps.metrics?.dispatches.inc({ kind: r.kind, step: step.name, result });
    return result;
  };
  try {
    await kube.create(job);
  } catch (err) {
    if (isAlreadyExists(err)) return counted('exists');
    throw err;
  }
  deps.log.info('step Job created', { resource: describe(r), job: job.metadata.name });
  return counted('created');
}
