// `ferry rerun KIND/NAME`: starts the current step of a resource again, as the sweep would, without waiting for
// it. The dispatcher decides which step and attempt are due (ignoring its attempt limit and settle time: a person
// asked) and creates the Job from its template; a step whose Job is still running is not started twice.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { jobName, labels } from '../../shared/api/phases.ts';
import { createLogger } from '../../shared/kube/logger.ts';
import { decide } from '../../shared/dispatch/decide.ts';
import { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { parseStepJobs } from '../../shared/step-job/step-jobs.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { fetchOne } from '../resource/fetch.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { kindAndName } from '../resource/names.ts';
import { kindAliases, refOf, type Resource } from './kinds.ts';

export default defineCommand({
  meta: { name: 'rerun', description: 'Start the current step of a backup or restore again: KIND/NAME, e.g. backup/nightly' },
  args: {
    target: { type: 'positional', required: false, description: 'dataupload/NAME (backup/NAME) or datadownload/NAME (restore/NAME)', valueHint: 'KIND/NAME' },
    ...kubeArgs,
  },
  async run({ args }) {
    const { kind, name } = kindAndName(args.target, kindAliases);
    await withKube(args, async ({ kube, namespace, ferryNamespace }) => {
      const r = await fetchOne<Resource>(kube, kind, namespace, name);
      const jobs = parseStepJobs(await kube.list<KubeObject>('Job', { namespace: ferryNamespace, labelSelector: `${labels.uid}=${r.metadata.uid}` }));
      const decision = decide(r, jobs, { mode: 'sweep', maxAttempts: Number.POSITIVE_INFINITY, now: Date.now(), settleMs: 0 });
      // the dispatcher's own code makes the Job; its log lines are for a server, not for this terminal
      const dispatcher = new Dispatcher({
        kube, namespace: ferryNamespace, limits: { cluster: 0, perNode: 0 }, maxAttempts: Number.POSITIVE_INFINITY,
        nodes: async () => [], log: createLogger({}, { write: () => {} }), instance: 'ferry-cli',
      });
      if (decision.action === 'run') {
        const result = await dispatcher.run(r, decision.step, decision.attempt);
        const job = jobName(r.kind, r.metadata.uid ?? '', decision.step, decision.attempt);
        consola.success(`${refOf(r)}: ${decision.step} step attempt ${decision.attempt} ${result === 'created' ? 'started' : 'was already there'} (Job ${ferryNamespace}/${job})`);
      } else if (decision.action === 'cancel') {
        await dispatcher.cancel(r, decision.why);
        consola.success(`${refOf(r)}: moved to Canceling (${decision.why}); finalize cleans up`);
      } else {
        throw new Error(`${refOf(r)} has no step to run again: ${decision.action === 'none' ? decision.why : decision.message}.`);
      }
    });
  },
});
