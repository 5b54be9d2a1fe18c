// Expiry, one pass of the sweep: a DataUpload whose spec.expire has passed since its creation is deleted, and its
// finalizer's delete step frees its repository data. Not deleted: one annotated ferry.dev/retain-if-expired:
// "true", one still running (it ends first, then expires on a later pass), one a restore in progress reads.
// Deleting is idempotent (the uid precondition never deletes a newer object of the same name).
import { terminalPhases } from '../shared/api/phases.ts';
import type { DataDownload, DataUpload } from '../shared/api/types.ts';
import { isNotFound } from '../shared/kube/errors.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import { readerOf } from '../shared/retention/plan.ts';
import { scheduleAnnotations } from '../shared/schedule/names.ts';
import { parseDuration } from '../shared/api/duration.ts';

export type ExpiryVerdict = { expire: true } | { expire: false; why: string };

export function expiryVerdict(du: DataUpload, downloads: readonly DataDownload[], nowMs: number): ExpiryVerdict {
  const ttl = parseDuration(du.spec.expire);
  if (ttl === undefined) return { expire: false, why: 'no spec.expire' };
  const due = Date.parse(du.metadata.creationTimestamp ?? '') + ttl;
  if (!(nowMs >= due)) return { expire: false, why: 'not expired yet' };
  if (du.metadata.deletionTimestamp) return { expire: false, why: 'already being deleted' };
  if (du.metadata.annotations?.[scheduleAnnotations.retainIfExpired] === 'true')
    return { expire: false, why: `annotated ${scheduleAnnotations.retainIfExpired}` };
  if (!terminalPhases.includes(du.status?.phase ?? 'New')) return { expire: false, why: 'still running' };
  const reader = readerOf(du, downloads);
  if (reader)
    return { expire: false, why: `DataDownload ${reader.metadata.namespace}/${reader.metadata.name} is reading it` };
  return { expire: true };
}

export async function expireUploads(kube: Kube, nowMs: number): Promise<{ deleted: string[]; errors: string[] }> {
  const uploads = await kube.list<DataUpload & KubeObject>('DataUpload');
  const downloads = await kube.list<DataDownload & KubeObject>('DataDownload');
  const deleted: string[] = [];
  const errors: string[] = [];
  for (const du of uploads) {
    const what = `DataUpload ${du.metadata.namespace}/${du.metadata.name}`;
    try {
      if (!expiryVerdict(du, downloads, nowMs).expire) continue;
      if (
        await kube.delete(
          { kind: 'DataUpload', namespace: du.metadata.namespace, name: du.metadata.name },
          { uid: du.metadata.uid },
        )
      )
        deleted.push(`${what}: expired (spec.expire ${du.spec.expire})`);
    } catch (err) {
      if (!isNotFound(err)) errors.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { deleted, errors };
}
