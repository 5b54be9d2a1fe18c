// `ferry rerun KIND/NAME`: starts the current step of a resource again, as the sweep would, without waiting for
// it. The dispatcher's own decision (shared/dispatch/decide.ts) says which step and attempt are due, ignoring its
// attempt limit and settle time (a person asked), and the Job is made as the dispatcher makes it
// (shared/dispatch/start.ts); a step whose Job is still running is not started twice.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { uidSelector } from '../../shared/step-job/contract.ts';
import { createLogger } from '../../shared/kube/logger.ts';
import { decide } from '../../shared/dispatch/decide.ts';
import { parseStepJobs } from '../../shared/step-job/jobs.ts';
import { startStepJob } from '../../shared/dispatch/start.ts';
import { moveToCanceling } from '../../shared/dispatch/status.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { fetchOne } from '../resource/fetch.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { kindAndName } from '../resource/names.ts';
import { kindAliases, nouns, refOf, type Resource } from './kinds.ts';
import type { DataDownload, DataUpload } from '../../shared/api/types.ts';

/** What to do instead, for a resource that has ended: it never runs again, a new one does the work. */
function insteadOfRerun(r: Resource): string {
  const phase = r.status?.phase;
  if (phase !== 'Canceled' && phase !== 'Failed') return '';
  const ns = r.metadata.namespace;
  const ended = `It ended ${phase}, and an ended ${nouns[r.kind]} never runs again`;
  if (r.kind === 'DataUpload')
    return ` ${ended}: back the PVC up anew with \`ferry backup create NEW-NAME --pvc ${(r as DataUpload).spec.sourcePVC} -n ${ns}\`.`;
  const from = (r as DataDownload).spec.source.dataUpload;
  const source = from
    ? `--from ${from.name} -n ${from.namespace ?? ns}${from.namespace && from.namespace !== ns ? ` --to-namespace ${ns}` : ''}`
    : `-n ${ns}`;
  return ` ${ended}: restore anew with \`ferry restore create NEW-NAME ${source}\`${phase === 'Canceled' ? '' : ' once the cause in `ferry restore describe` is fixed'}.`;
}

export default defineCommand({
  meta: {
    name: 'rerun',
    description: 'Start the current step of a backup or restore again: KIND/NAME, e.g. backup/nightly',
  },
  args: {
    target: {
      type: 'positional',
      required: false,
      description: 'dataupload/NAME (backup/NAME) or datadownload/NAME (restore/NAME)',
      valueHint: 'KIND/NAME',
    },
    ...kubeArgs,
  },
  async run({ args }) {
    const { kind, name } = kindAndName(args.target, kindAliases);
    await withKube(args, async ({ kube, namespace, ferryNamespace }) => {
      const r = await fetchOne<Resource>(kube, kind, namespace, name);
      const jobs = parseStepJobs(
        await kube.list<KubeObject>('Job', {
          namespace: ferryNamespace,
          labelSelector: uidSelector(r.metadata.uid ?? ''),
        }),
      );
      const decision = decide(r, jobs, {
        mode: 'sweep',
        maxAttempts: Number.POSITIVE_INFINITY,
        now: Date.now(),
        settleMs: 0,
      });
      if (decision.action === 'run') {
        const { result, job } = await startStepJob(kube, ferryNamespace, {
          resource: r,
          step: decision.step,
          attempt: decision.attempt,
        });
        consola.success(
          `${refOf(r)}: ${decision.step} step attempt ${decision.attempt} ${result === 'created' ? 'started' : 'was already there'} (Job ${ferryNamespace}/${job})`,
        );
      } else if (decision.action === 'cancel') {
        // a failed Event write is logged for a server; this terminal hears of the move itself
        await moveToCanceling(
          { kube, log: createLogger({}, { write: () => {} }), instance: 'ferry-cli' },
          r,
          decision.why,
        );
        consola.success(`${refOf(r)}: moved to Canceling (${decision.why}); finalize cleans up`);
      } else {
        const why = decision.action === 'none' ? decision.why : decision.message;
        throw new Error(`${refOf(r)} has no step to run again: ${why}.${insteadOfRerun(r)}`);
      }
    });
  },
});
