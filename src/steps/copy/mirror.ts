// The DataUpload's view of its copies: status.copies holds one entry per DataCopy (merged by its name), written
// through the status subresource with the resourceVersion it was computed from, so the DataUpload's own step and
// other copies writing at the same time lose nothing. The DataUpload's phase is never touched.
import type { BackupCopyRecord, DataCopy } from '../../shared/api/copy.ts';
import type { DataUpload } from '../../shared/api/types.ts';
import { isConflict, isNotFound } from '../../shared/kube/errors.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';

type Upload = DataUpload & KubeObject;

const maxConflicts = 20;

/** The entry a DataCopy's status gives its DataUpload. */
export function copyRecord(dc: DataCopy): BackupCopyRecord {
  const s = dc.status ?? {};
  return {
    backupStorageLocation: dc.spec.backupStorageLocation,
    dataCopy: dc.metadata.name,
    phase: s.phase ?? 'New',
    ...(s.snapshotID ? { snapshotID: s.snapshotID } : {}),
    ...(s.completionTimestamp ? { completionTimestamp: s.completionTimestamp } : {}),
    ...(s.message ? { message: s.message } : {}),
  };
}

/**
 * Replaces (or with `undefined`, removes) the DataCopy's entry in its DataUpload's status.copies. A DataUpload that
 * is gone has nothing to show it in.
 */
export async function setUploadCopy(
  kube: Kube,
  at: { namespace: string; dataUpload: string; dataCopy: string },
  record: BackupCopyRecord | undefined,
): Promise<void> {
  const key = { kind: 'DataUpload' as const, namespace: at.namespace, name: at.dataUpload };
  for (let attempt = 1; ; attempt++) {
    const du = await kube.get<Upload>(key);
    if (!du) return;
    const before = du.status?.copies ?? [];
    const copies = record
      ? before.some((c) => c.dataCopy === at.dataCopy)
        ? before.map((c) => (c.dataCopy === at.dataCopy ? record : c))
        : [...before, record]
      : before.filter((c) => c.dataCopy !== at.dataCopy);
    if (JSON.stringify(copies) === JSON.stringify(before)) return;
    try {
      await kube.patch(
        key,
        { metadata: { resourceVersion: du.metadata.resourceVersion }, status: { copies } },
        { status: true },
      );
      return;
    } catch (err) {
      if (isNotFound(err)) return;
      if (!isConflict(err) || attempt >= maxConflicts) throw err;
    }
  }
}

export function mirrorIntoUpload(ctx: { kube: Kube }, dc: DataCopy & KubeObject): Promise<void> {
  return setUploadCopy(
    ctx.kube,
    { namespace: dc.metadata.namespace ?? '', dataUpload: dc.spec.dataUpload, dataCopy: dc.metadata.name },
    copyRecord(dc),
  );
}
