// `ferry-step maintenance <location> <prune|check|check-data>`: one maintenance task on every repository of a
// storage location, each run recorded in the location's status (history per repository, bounded) and as an Event.
// `ferry-step maintenance --reconcile`: makes the per-location maintenance CronJobs match the locations
// (./maintenance-cronjobs.ts). A repository a backup keeps locked is skipped and recorded so, never waited for long.
import type { BackupStorageLocation, DataUpload, MaintenanceRun, MaintenanceTask } from '../../shared/api/types.ts';
import { emitEvent } from '../../shared/kube/events.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { updateStatus } from '../../shared/kube/status.ts';
import { repositoryAccess } from '../../shared/location/access.ts';
import { rfc3339 } from '../../shared/kube/conditions.ts';
import type { Outcome } from '../context.ts';
import { repositoryFolders } from './bucket.ts';
import { defaultReadDataSubset, reconcileCronJobs } from './cronjobs.ts';
import { recordRun, worstOutcome } from './history.ts';
import { maintainRepository, type MaintenanceContext } from './repository.ts';

export type { MaintenanceContext };

export type MaintenanceRequest = { mode: 'reconcile' } | { mode: 'run'; location: string; task: MaintenanceTask };

/** "10%" as 0.1. */
export function readDataFraction(subset: string | undefined): number {
  const m = /^(\d+(?:\.\d+)?)%$/.exec(subset ?? defaultReadDataSubset);
  const percent = m ? Number(m[1]) : NaN;
  if (!(percent > 0 && percent <= 100))
    throw new Error(`readDataSubset "${subset}" is not a percentage from 1% to 100%.`);
  return percent / 100;
}

export async function runMaintenance(ctx: MaintenanceContext, req: MaintenanceRequest): Promise<Outcome> {
  if (req.mode === 'reconcile') {
    const r = await reconcileCronJobs(ctx);
    const reason = `maintenance and sync CronJobs: ${r.created.length} created, ${r.updated.length} updated, ${r.deleted.length} deleted, ${r.unchanged} unchanged, ${r.errors.length} errors${r.errors.length ? ` (${r.errors.join('; ')})` : ''}`;
    return {
      outcome: r.errors.length ? 'Failed' : 'Advanced',
      reason,
      counters: {
        created: r.created.length,
        updated: r.updated.length,
        deleted: r.deleted.length,
        unchanged: r.unchanged,
        errors: r.errors.length,
      },
    };
  }
  const bsl = await ctx.kube.get<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ctx.ferryNamespace,
    name: req.location,
  });
  if (!bsl)
    return {
      outcome: 'Skipped',
      reason: `BackupStorageLocation ${ctx.ferryNamespace}/${req.location} does not exist.`,
    };
  return maintainLocation(ctx, bsl, req.task);
}

/**
 * Every namespace that may have a repository here: the folders the bucket holds under the location's prefix (the
 * truth: a namespace whose backups were all deleted still has its repository), those the history names, those the
 * location allows or lets others restore from, and those whose DataUploads use it. A namespace without a
 * repository (no config file) is passed over.
 */
export async function repositoryNamespaces(ctx: MaintenanceContext, bsl: BackupStorageLocation): Promise<string[]> {
  const names = new Set<string>(await bucketNamespaces(ctx, bsl));
  for (const r of bsl.status?.maintenance?.repositories ?? []) names.add(r.namespace);
  for (const ns of bsl.spec.allowedNamespaces) if (ns !== '*') names.add(ns);
  for (const r of bsl.spec.crossNamespaceRestores ?? []) names.add(r.from);
  for (const du of await ctx.kube.list<DataUpload & KubeObject>('DataUpload')) {
    if (du.spec.backupStorageLocation === bsl.metadata.name && du.metadata.namespace) names.add(du.metadata.namespace);
  }
  return [...names].sort();
}

/** The folders under the location's prefix that can be a namespace's repository; none when the bucket cannot be listed. */
async function bucketNamespaces(ctx: MaintenanceContext, bsl: BackupStorageLocation): Promise<string[]> {
  try {
    return await repositoryFolders(ctx, bsl);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    // the namespaces the cluster knows are still maintained; a run whose listing works finds the rest
    ctx.log.warn('could not list the repositories in the bucket', { error: (err as Error).message });
    return [];
  }
}

async function maintainLocation(
  ctx: MaintenanceContext,
  bsl: BackupStorageLocation & KubeObject,
  task: MaintenanceTask,
): Promise<Outcome> {
  const readDataFractionOf = readDataFraction(bsl.spec.maintenance?.check?.readDataSubset);
  const runs: MaintenanceRun[] = [];
  let bytesFreed = 0;
  for (const namespace of await repositoryNamespaces(ctx, bsl)) {
    const started = ctx.now();
    let run: MaintenanceRun | undefined;
    try {
      // a check only reads (a location in recovery mode can be checked); a prune writes
      const use = task === 'prune' ? 'write' : 'read';
      const access = await repositoryAccess(ctx.kube, ctx.ferryNamespace, bsl.metadata.name, namespace, use);
      try {
        run = await maintainRepository(ctx, access, { task, readDataFraction: readDataFractionOf });
      } finally {
        access.dispose();
      }
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      run = {
        task,
        outcome: 'Failed',
        startTime: rfc3339(started),
        durationSeconds: (ctx.now().getTime() - started.getTime()) / 1000,
        message: `${task} could not start: ${(err as Error).message}`,
      };
    }
    if (!run) continue;
    runs.push(run);
    bytesFreed += run.bytesFreed ?? 0;
    await record(ctx, bsl, namespace, run);
  }
  const outcome = worstOutcome(runs.map((r) => r.outcome));
  const count = (o: MaintenanceRun['outcome']): number => runs.filter((r) => r.outcome === o).length;
  const reason =
    runs.length === 0
      ? `No repository exists yet at BackupStorageLocation ${bsl.metadata.name}; nothing to ${task}.`
      : `${task} of ${runs.length} repositor${runs.length === 1 ? 'y' : 'ies'} at ${bsl.metadata.name}: ${count('Succeeded')} succeeded, ${count('Skipped')} skipped, ${count('Failed')} failed${task === 'prune' ? `; ${bytesFreed} bytes freed` : ''}.`;
  return {
    outcome: outcome === 'Succeeded' ? 'Advanced' : outcome === 'Skipped' ? 'Waiting' : 'Failed',
    reason,
    counters: {
      repositories: runs.length,
      succeeded: count('Succeeded'),
      skipped: count('Skipped'),
      failed: count('Failed'),
      bytesFreed,
    },
  };
}

/** The run in the location's status (optimistic concurrency: re-read and re-apply on a conflict), and an Event. */
async function record(
  ctx: MaintenanceContext,
  bsl: BackupStorageLocation & KubeObject,
  namespace: string,
  run: MaintenanceRun,
): Promise<void> {
  const now = ctx.now();
  await updateStatus(ctx.kube, bsl, (fresh) => {
    fresh.status = recordRun(fresh.status, namespace, run, now);
  });
  const note = `${run.task} of the repository of namespace ${namespace}: ${run.message ?? run.outcome}`.slice(0, 1000);
  ctx.log[run.outcome === 'Failed' ? 'warn' : 'info'](note, { namespace, task: run.task, outcome: run.outcome });
  try {
    const reason = `Maintenance${run.outcome}`;
    await emitEvent(
      ctx.kube,
      bsl,
      { type: run.outcome === 'Failed' ? 'Warning' : 'Normal', reason, note, action: 'Maintain' },
      { controller: 'ferry.dev/maintenance', instance: ctx.settings.podName },
      now,
    );
  } catch (err) {
    ctx.log.warn('could not record an Event', { error: (err as Error).message });
  }
}
