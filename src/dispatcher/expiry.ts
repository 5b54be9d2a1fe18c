// Expiry, one pass of the sweep: a DataUpload whose spec.expire has passed since its creation is deleted, and its
// finalizer's delete step frees its repository data; an AppBackup likewise, taking its DataUploads with it; a
// DataCopy that long after its copy completed (its finalizer forgets the copied snapshot). Not deleted: one
// annotated ferry.dev/retain-if-expired: "true", one still running (it ends first, then expires on a later pass),
// one a restore in progress reads (a DataDownload names DataUploads, never their copies).
// Deleting is idempotent (the uid precondition never deletes a newer object of the same name).
import { terminalPhases } from '../shared/api/phases.ts';
import type { DataDownload, DataUpload } from '../shared/api/types.ts';
import { isNotFound } from '../shared/kube/errors.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import { readerOf } from '../shared/retention/plan.ts';
import { scheduleAnnotations } from '../shared/schedule/names.ts';
import { parseDuration } from '../shared/api/duration.ts';
import type { AppBackup, AppRestore } from '../shared/api/app.ts';
import type { DataCopy } from '../shared/api/copy.ts';
import { isAppTerminal } from '../shared/app/phases.ts';

export type ExpiryVerdict = { expire: true } | { expire: false; why: string };

interface Expiring extends KubeObject {
  spec: { expire?: string };
}

/**
 * The verdict from what every expiring kind shares: its spec.expire, deletion and annotation; undefined: expired.
 * The lifetime counts from `since` (default the creation).
 */
function notYet(
  obj: Expiring,
  finished: boolean,
  nowMs: number,
  since = obj.metadata.creationTimestamp,
): ExpiryVerdict | undefined {
  const ttl = parseDuration(obj.spec.expire);
  if (ttl === undefined) return { expire: false, why: 'no spec.expire' };
  const due = Date.parse(since ?? '') + ttl;
  if (!(nowMs >= due)) return { expire: false, why: 'not expired yet' };
  if (obj.metadata.deletionTimestamp) return { expire: false, why: 'already being deleted' };
  if (obj.metadata.annotations?.[scheduleAnnotations.retainIfExpired] === 'true')
    return { expire: false, why: `annotated ${scheduleAnnotations.retainIfExpired}` };
  if (!finished) return { expire: false, why: 'still running' };
  return undefined;
}

export function expiryVerdict(du: DataUpload, downloads: readonly DataDownload[], nowMs: number): ExpiryVerdict {
  const early = notYet(du as DataUpload & KubeObject, terminalPhases.includes(du.status?.phase ?? 'New'), nowMs);
  if (early) return early;
  const reader = readerOf(du, downloads);
  if (reader)
    return { expire: false, why: `DataDownload ${reader.metadata.namespace}/${reader.metadata.name} is reading it` };
  return { expire: true };
}

/** An AppBackup expires as a DataUpload does; an unfinished AppRestore of it keeps it. */
export function appExpiryVerdict(ab: AppBackup, restores: readonly AppRestore[], nowMs: number): ExpiryVerdict {
  const early = notYet(ab as AppBackup & KubeObject, isAppTerminal('AppBackup', ab.status?.phase), nowMs);
  if (early) return early;
  const reader = restores.find(
    (ar) =>
      !isAppTerminal('AppRestore', ar.status?.phase) &&
      ar.spec.appBackup.name === ab.metadata.name &&
      (ar.spec.appBackup.namespace ?? ar.metadata.namespace) === ab.metadata.namespace,
  );
  if (reader)
    return { expire: false, why: `AppRestore ${reader.metadata.namespace}/${reader.metadata.name} is reading it` };
  return { expire: true };
}

/**
 * A DataCopy expires spec.expire after its copy completed: never before it completed, and never one that failed or
 * was canceled (it holds no copy, and it tells its policy this backup was tried).
 */
export function copyExpiryVerdict(copy: DataCopy, nowMs: number): ExpiryVerdict {
  if (copy.spec.expire === undefined) return { expire: false, why: 'no spec.expire' };
  if (copy.status?.phase !== 'Completed' || !copy.status.completionTimestamp)
    return { expire: false, why: 'not completed' };
  return notYet(copy as DataCopy & KubeObject, true, nowMs, copy.status.completionTimestamp) ?? { expire: true };
}

interface Expired {
  deleted: string[];
  errors: string[];
}

async function deleteExpired(
  kube: Kube,
  kind: 'DataUpload' | 'AppBackup' | 'DataCopy',
  objects: readonly Expiring[],
  verdict: (obj: Expiring) => ExpiryVerdict,
): Promise<Expired> {
  const deleted: string[] = [];
  const errors: string[] = [];
  for (const obj of objects) {
    const what = `${kind} ${obj.metadata.namespace}/${obj.metadata.name}`;
    try {
      if (!verdict(obj).expire) continue;
      if (
        await kube.delete(
          { kind, namespace: obj.metadata.namespace, name: obj.metadata.name },
          { uid: obj.metadata.uid },
        )
      )
        deleted.push(`${what}: expired (spec.expire ${obj.spec.expire})`);
    } catch (err) {
      if (!isNotFound(err)) errors.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { deleted, errors };
}

export async function expireUploads(kube: Kube, nowMs: number): Promise<Expired> {
  const uploads = await kube.list<DataUpload & KubeObject>('DataUpload');
  const downloads = await kube.list<DataDownload & KubeObject>('DataDownload');
  return deleteExpired(kube, 'DataUpload', uploads, (du) =>
    expiryVerdict(du as DataUpload & KubeObject, downloads, nowMs),
  );
}

/** Deleting an AppBackup deletes its DataUploads (owner references), whose delete step frees the data. */
export async function expireAppBackups(kube: Kube, nowMs: number): Promise<Expired> {
  const backups = await kube.list<AppBackup & KubeObject>('AppBackup');
  const restores = await kube.list<AppRestore & KubeObject>('AppRestore');
  return deleteExpired(kube, 'AppBackup', backups, (ab) =>
    appExpiryVerdict(ab as AppBackup & KubeObject, restores, nowMs),
  );
}

/** Deleting a DataCopy makes its finalizer forget the copied snapshot in the destination. */
export async function expireCopies(kube: Kube, nowMs: number): Promise<Expired> {
  const copies = await kube.list<DataCopy & KubeObject>('DataCopy');
  return deleteExpired(kube, 'DataCopy', copies, (c) => copyExpiryVerdict(c as DataCopy & KubeObject, nowMs));
}
