// `ferry-step location-sync <location>` (the location's CronJob ferry-sync-<location>, while spec.backupSync is
// set): the backups found in the location's repositories appear as DataUploads on this cluster, as Velero's backup
// sync does. Every namespace with a repository in the bucket that exists here and that the location allows has its
// repository opened to read (its own derived password; recoverVersions honoured) and its DataUploads made to match
// (./uploads.ts). A repository that cannot be read changes nothing in its namespace. The run is recorded in the
// location's status.sync.
import type { BackupStorageLocation, LocationSyncStatus } from '../../shared/api/types.ts';
import { rfc3339 } from '../../shared/kube/conditions.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { updateStatus } from '../../shared/kube/status.ts';
import { NoRepositoryError } from '../../engine/operations/errors.ts';
import { openRepository } from '../../engine/operations/open.ts';
import { snapshots, type SnapshotEntry } from '../../engine/operations/snapshots.ts';
import { repositoryAccess } from '../../shared/location/access.ts';
import { backupAllowed } from '../../shared/location/namespaces.ts';
import { syncedFrom, syncedLabel } from '../../shared/location/synced.ts';
import type { DataUpload } from '../../shared/api/types.ts';
import type { Outcome } from '../context.ts';
import { namespaceName } from '../../shared/location/bucket-namespaces.ts';
import { repositoryFolders } from '../maintenance/bucket.ts';
import type { MaintenanceContext } from '../maintenance/repository.ts';
import { foundBackups } from './found.ts';
import { syncNamespace } from './uploads.ts';

/** What the sync needs: a location's context, whose folder listing tests may replace (as maintenance's). */
export type SyncContext = MaintenanceContext;

/** Notes quoted in status.sync.message; the rest are counted. */
const quotedNotes = 10;

interface Tally {
  created: number;
  deleted: number;
  found: number;
  notes: string[];
  failed: number;
}

/** The repository's snapshots, or undefined when the namespace has no repository at this location. */
async function readSnapshots(
  ctx: SyncContext,
  location: string,
  namespace: string,
): Promise<SnapshotEntry[] | undefined> {
  const access = await repositoryAccess(ctx.kube, ctx.ferryNamespace, location, namespace, 'read');
  const backend = ctx.engine.openBackend(access.location, access.open);
  try {
    const repo = await openRepository(backend, access.password).catch((err: unknown) => {
      if (err instanceof NoRepositoryError) return undefined;
      throw err;
    });
    return repo && (await snapshots(repo, { signal: ctx.signal, lockWaitMs: ctx.settings.lockWaitMs }));
  } finally {
    await backend.close();
    access.dispose();
  }
}

/** Why `namespace` is not synced, or undefined when it is. */
async function passedOver(
  ctx: SyncContext,
  bsl: BackupStorageLocation,
  namespace: string,
): Promise<string | undefined> {
  if (!backupAllowed(bsl.spec, namespace)) return `namespace ${namespace} is not allowed by the location`;
  if (!(await ctx.kube.get({ kind: 'Namespace', name: namespace })))
    return `namespace ${namespace} does not exist here`;
  return undefined;
}

async function syncOne(ctx: SyncContext, bsl: BackupStorageLocation, namespace: string, tally: Tally): Promise<void> {
  const location = bsl.metadata.name;
  const why = await passedOver(ctx, bsl, namespace);
  if (why) {
    tally.notes.push(why);
    return;
  }
  let entries: SnapshotEntry[] | undefined;
  try {
    entries = await readSnapshots(ctx, location, namespace);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    tally.failed++;
    tally.notes.push(`the repository of namespace ${namespace} could not be read: ${(err as Error).message}`);
    return;
  }
  const { backups, passed } = foundBackups(entries ?? [], namespace);
  tally.found += backups.length;
  tally.notes.push(...passed);
  const ids = new Set((entries ?? []).map((e) => e.id));
  const r = await syncNamespace(ctx, location, namespace, backups, ids);
  tally.created += r.created;
  tally.deleted += r.deleted;
  for (const name of r.leftAlone) tally.notes.push(`DataUpload ${name} exists and was not synced from this location`);
}

function summary(t: Tally): string {
  const head = `${t.found} backup(s) found, ${t.created} DataUpload(s) created, ${t.deleted} deleted`;
  if (t.notes.length === 0) return `${head}.`;
  const more = t.notes.length > quotedNotes ? `; and ${t.notes.length - quotedNotes} more` : '';
  return `${head}; passed over: ${t.notes.slice(0, quotedNotes).join('; ')}${more}.`.slice(0, 4096);
}

export async function runLocationSync(ctx: SyncContext, location: string): Promise<Outcome> {
  const bsl = await ctx.kube.get<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ctx.ferryNamespace,
    name: location,
  });
  if (!bsl)
    return { outcome: 'Skipped', reason: `BackupStorageLocation ${ctx.ferryNamespace}/${location} does not exist.` };
  if (!bsl.spec.backupSync)
    return { outcome: 'Skipped', reason: `BackupStorageLocation ${location} has no spec.backupSync; nothing to sync.` };
  const tally: Tally = { created: 0, deleted: 0, found: 0, notes: [], failed: 0 };
  const started = ctx.now();
  try {
    const namespaces = new Set(await repositoryFolders(ctx, bsl));
    // deleted objects leave no folder to list: in recovery mode every namespace here is tried
    if (bsl.spec.recoverVersions)
      for (const ns of await ctx.kube.list('Namespace'))
        if (backupAllowed(bsl.spec, ns.metadata.name)) namespaces.add(ns.metadata.name);
    // a namespace whose synced DataUploads outlived its folder: its repository is opened to confirm it is gone
    const synced = await ctx.kube.list<DataUpload & KubeObject>('DataUpload', { labelSelector: `${syncedLabel}=true` });
    for (const du of synced)
      if (syncedFrom(du) === location && du.metadata.namespace) namespaces.add(du.metadata.namespace);
    for (const namespace of [...namespaces].filter((n) => namespaceName.test(n)).sort())
      await syncOne(ctx, bsl, namespace, tally);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    tally.failed++;
    tally.notes.unshift(`the sync stopped: ${(err as Error).message}`);
  }
  const status: LocationSyncStatus = {
    lastSyncTime: rfc3339(started),
    created: tally.created,
    deleted: tally.deleted,
    found: tally.found,
    message: summary(tally),
  };
  await updateStatus(ctx.kube, bsl, (fresh) => {
    fresh.status = { ...fresh.status, sync: status };
  });
  ctx.log[tally.failed ? 'warn' : 'info'](`backup sync of ${location}: ${status.message}`);
  return {
    outcome: tally.failed ? 'Failed' : 'Advanced',
    reason: status.message!,
    counters: { found: tally.found, created: tally.created, deleted: tally.deleted, failed: tally.failed },
  };
}
