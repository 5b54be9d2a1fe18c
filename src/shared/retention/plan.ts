// Which DataUploads of a schedule retention deletes, per PVC, and the two rules above the keep-policy: the only
// Completed backup of a PVC is never deleted, nor one a restore in progress is reading. A backup's time is the
// time its run was due (annotation ferry.dev/scheduled-time), else when it started, else when it was created:
// so a test or an import can back-date a backup by setting that annotation.
import { terminalPhases } from '../api/phases.ts';
import type { DataDownload, DataUpload } from '../api/types.ts';
import { scheduleAnnotations } from '../schedule/names.ts';
import { applyRetention } from './retention.ts';
import type { KeepRules } from './retention.ts';

/** ms since the epoch that retention files the backup under. */
export function backupTime(du: DataUpload): number {
  const stated =
    du.metadata.annotations?.[scheduleAnnotations.scheduledTime] ??
    du.status?.startTimestamp ??
    du.metadata.creationTimestamp;
  const ms = Date.parse(stated ?? '');
  return Number.isNaN(ms) ? 0 : ms;
}

/** A restore that has not ended and reads this backup, by DataUpload name or by (a prefix of) its snapshot ID. */
export function readerOf(du: DataUpload, downloads: readonly DataDownload[]): DataDownload | undefined {
  const namespace = du.metadata.namespace;
  const snapshot = du.status?.snapshotID;
  return downloads.find((dd) => {
    if (terminalPhases.includes(dd.status?.phase ?? 'New')) return false;
    const source = dd.spec.source;
    if (source.dataUpload)
      return (
        source.dataUpload.name === du.metadata.name &&
        (source.dataUpload.namespace ?? dd.metadata.namespace) === namespace
      );
    const from = dd.spec.sourceNamespace ?? dd.metadata.namespace;
    return (
      from === namespace &&
      snapshot !== undefined &&
      source.snapshotID !== undefined &&
      snapshot.startsWith(source.snapshotID)
    );
  });
}

export interface RetentionPlan {
  delete: DataUpload[];
  /** backups the keep-policy would delete but a rule above it keeps, with why */
  spared: { name: string; why: string }[];
}

export function planRetention(
  uploads: readonly DataUpload[],
  downloads: readonly DataDownload[],
  rules: KeepRules,
  timeZone: string,
): RetentionPlan {
  const plan: RetentionPlan = { delete: [], spared: [] };
  const byPVC = new Map<string, DataUpload[]>();
  for (const du of uploads) {
    if (du.status?.phase !== 'Completed' || du.metadata.deletionTimestamp) continue;
    byPVC.set(du.spec.sourcePVC, [...(byPVC.get(du.spec.sourcePVC) ?? []), du]);
  }
  for (const group of byPVC.values()) {
    const items = group.map((du) => ({ du, time: backupTime(du) }));
    const { keep, remove } = applyRetention(items, rules, timeZone);
    remove.forEach((item, i) => {
      const reader = readerOf(item.du, downloads);
      if (keep.length === 0 && i === 0)
        plan.spared.push({ name: item.du.metadata.name, why: 'it is the only Completed backup of its PVC' });
      else if (reader)
        plan.spared.push({
          name: item.du.metadata.name,
          why: `DataDownload ${reader.metadata.namespace}/${reader.metadata.name} is reading it`,
        });
      else plan.delete.push(item.du);
    });
  }
  return plan;
}
