// The sweep: one pass over every DataUpload and DataDownload that starts any step whose Job is missing, retries a
// failed step as its next attempt, gives a resource up after the last attempt (with the reason), moves canceled
// resources on, does the same for AppBackups and AppRestores (./app.ts), starts DataCopies' next attempts
// (./copy.ts), removes what deleted resources left in ferry's namespace, starts lost BackupSchedule reconciles,
// makes the DataCopies CopyPolicies call for and writes their status (./copy-policy-reconcile.ts), deletes expired
// DataUploads, AppBackups and DataCopies (./expiry.ts), and when ferry is Velero's data mover, does what a lost
// call left undone on either side of the bridge (./velero.ts). Run every minute by the ferry-sweep CronJob
// (`ferry-dispatcher sweep`), so a lost webhook call delays work but never loses it.
import { labels } from '../shared/step-job/contract.ts';
import type { StepName } from '../shared/api/types.ts';
import { isNotFound, KubeError } from '../shared/kube/errors.ts';
import type { KubeObject } from '../shared/kube/kube.ts';
import type { KindName } from '../shared/kube/resources.ts';
import { decide } from '../shared/dispatch/decide.ts';
import { describe, type Resource } from '../shared/dispatch/status.ts';
import type { Dispatcher } from './dispatcher.ts';
import { limited } from './limits.ts';
import { expireAppBackups, expireCopies, expireUploads } from './expiry.ts';
import { sweepSchedules } from './schedule.ts';
import { sweepApps } from './app.ts';
import { sweepCopies } from './copy.ts';
import { sweepCopyPolicies } from './copy-policy-reconcile.ts';
import { parseStepJobs } from '../shared/step-job/jobs.ts';

export interface SweepReport {
  dispatched: string[];
  waiting: string[];
  canceled: string[];
  failed: string[];
  deleted: string[];
  /** DataCopies made for CopyPolicies */
  copied: string[];
  errors: string[];
}

/** Jobs and exposure objects of a resource that is gone are removed once this old, so a Job made while its
 * resource was being created is never taken for an orphan. */
const orphanAgeMs = 10 * 60_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export async function sweep(dispatcher: Dispatcher): Promise<SweepReport> {
  const { kube, namespace, limits } = dispatcher.context;
  const report: SweepReport = {
    dispatched: [],
    waiting: [],
    canceled: [],
    failed: [],
    deleted: [],
    copied: [],
    errors: [],
  };
  // Jobs first: a Job that ends after this list is still seen running, never as missing
  const jobObjects = await kube.list<KubeObject>('Job', { namespace, labelSelector: labels.uid });
  const jobs = parseStepJobs(jobObjects);
  const resources = await dispatcher.resources();
  const options = dispatcher.decideOptions('sweep');
  for (const r of resources) {
    const decision = decide(r, jobs, options);
    try {
      if (decision.action === 'run' && (decision.step !== 'transfer' || !limited(limits))) {
        const refused = await runOrRefused(dispatcher, r, decision.step, decision.attempt);
        if (refused) report.failed.push(`${describe(r)}: ${refused}`);
        else report.dispatched.push(`${describe(r)}: ${decision.step} attempt ${decision.attempt}`);
      } else if (decision.action === 'cancel') {
        await dispatcher.cancel(r, decision.why);
        report.canceled.push(describe(r));
      } else if (decision.action === 'fail') {
        await dispatcher.giveUp(r, decision);
        report.failed.push(`${describe(r)}: ${decision.message}`);
      }
    } catch (err) {
      report.errors.push(`${describe(r)}: ${message(err)}`);
    }
  }
  if (limited(limits)) {
    const placed = await dispatcher.placeTransfers('sweep');
    report.dispatched.push(...placed.started.map((s) => `${s}: transfer`));
    report.waiting.push(...placed.waiting);
  }
  const apps = await sweepApps(dispatcher.context, jobObjects).catch((err) => {
    report.errors.push(`AppBackups and AppRestores: ${message(err)}`);
  });
  const dataCopies = await sweepCopies(dispatcher.context, jobObjects).catch((err) => {
    report.errors.push(`DataCopies: ${message(err)}`);
  });
  if (dataCopies) {
    report.dispatched.push(...dataCopies.dispatched);
    report.waiting.push(...dataCopies.waiting);
    report.errors.push(...dataCopies.errors);
  }
  if (apps && dataCopies) {
    report.dispatched.push(...apps.dispatched);
    report.failed.push(...apps.failed);
    report.errors.push(...apps.errors);
    // without the lists of AppBackups, AppRestores and DataCopies, their Jobs could not be told from orphans
    const living = [...resources, ...apps.resources, ...dataCopies.resources];
    report.deleted.push(...(await removeOrphans(dispatcher, jobObjects, living, report)));
  }
  if (dispatcher.velero)
    report.errors.push(...(await dispatcher.velero.sweep(resources).catch((err) => [`Velero: ${message(err)}`])));
  const copies = await sweepCopyPolicies({ kube, namespace, now: dispatcher.context.now }).catch((err) => ({
    created: [],
    errors: [`CopyPolicies: ${message(err)}`],
  }));
  report.copied.push(...copies.created);
  report.errors.push(...copies.errors);
  await sweepSchedulesAndExpiry(dispatcher, report);
  return report;
}

/** Schedules whose new generation got no reconcile Job, and DataUploads, AppBackups and DataCopies past their spec.expire. */
async function sweepSchedulesAndExpiry(dispatcher: Dispatcher, report: SweepReport): Promise<void> {
  const { kube, namespace, now } = dispatcher.context;
  try {
    const schedules = await sweepSchedules({ kube, namespace });
    report.dispatched.push(...schedules.started.map((s) => `${s}: schedule reconcile`));
    report.errors.push(...schedules.errors);
    for (const expire of [expireUploads, expireAppBackups, expireCopies]) {
      const expired = await expire(kube, now().getTime());
      report.deleted.push(...expired.deleted);
      report.errors.push(...expired.errors);
    }
  } catch (err) {
    report.errors.push(`schedules and expiry: ${message(err)}`);
  }
}

/**
 * Starts a step, or gives the resource up when the apiserver refuses its Job as invalid: that will not change on
 * a retry (e.g. a name too long for a label, on a resource made while the webhook was not installed).
 */
async function runOrRefused(
  dispatcher: Dispatcher,
  r: Resource,
  step: StepName,
  attempt: number,
): Promise<string | undefined> {
  try {
    await dispatcher.run(r, step, attempt);
    return undefined;
  } catch (err) {
    if (!(err instanceof KubeError && err.status === 422)) throw err;
    const reason = `ferry cannot start its ${step} step: ${err.message}`;
    await dispatcher.giveUp(r, { action: 'fail', step, phase: 'Failed', message: reason });
    return reason;
  }
}

/** Jobs and exposure objects in ferry's namespace whose resource no longer exists. */
async function removeOrphans(
  dispatcher: Dispatcher,
  jobs: KubeObject[],
  resources: readonly KubeObject[],
  report: SweepReport,
): Promise<string[]> {
  const { kube, namespace, now } = dispatcher.context;
  const living = new Set(resources.map((r) => r.metadata.uid));
  const candidates = [...jobs];
  for (const kind of ['PersistentVolumeClaim', 'VolumeSnapshot'] as const) {
    try {
      candidates.push(...(await kube.list<KubeObject>(kind, { namespace, labelSelector: labels.uid })));
    } catch (err) {
      report.errors.push(`could not list ${kind}s: ${message(err)}`);
    }
  }
  const deleted: string[] = [];
  for (const obj of candidates) {
    const uid = obj.metadata.labels?.[labels.uid];
    const age = now().getTime() - Date.parse(obj.metadata.creationTimestamp ?? '');
    if (!uid || living.has(uid) || !(age > orphanAgeMs)) continue;
    const key = { kind: obj.kind as KindName, namespace, name: obj.metadata.name };
    try {
      if (await kube.delete(key, { propagationPolicy: 'Background', uid: obj.metadata.uid }))
        deleted.push(`${obj.kind} ${obj.metadata.name}`);
    } catch (err) {
      if (!isNotFound(err)) report.errors.push(`${obj.kind} ${obj.metadata.name}: ${message(err)}`);
    }
  }
  return deleted;
}
