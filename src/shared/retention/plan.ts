// Which DataUploads of a schedule retention deletes, per PVC, and the two rules above the keep-policy: the only
// Completed backup of a PVC is never deleted, nor one a restore in progress is reading (the same rules for a
// schedule's AppBackups: ./app-plan.ts). A backup's time is the
// time its run was due (annotation ferry.dev/scheduled-time), else when it started, else when it was created:
// so a test or an import can back-date a backup by setting that annotation.
import { terminalPhases } from '../api/phases.ts';
import type { DataDownload, DataUpload } from '../api/types.ts';
import { scheduleAnnotations } from '../schedule/names.ts';
import { applyRetention } from './retention.ts';
import type { KeepRules } from './retention.ts';

/** What retention reads of a backup's time: a DataUpload or an AppBackup. */
export interface Timed {
  metadata: { name: string; annotations?: Record<string, string>; creationTimestamp?: string };
  status?: { startTimestamp?: string };
}

/** ms since the epoch that retention files the backup under. */
export function backupTime(du: Timed): number {
  const stated =
    du.metadata.annotations?.[scheduleAnnotations.scheduledTime] ??
    du.status?.startTimestamp ??
    du.metadata.creationTimestamp;
  const ms = Date.parse(stated ?? '');
  return Number.isNaN(ms) ? 0 : ms;
}

/** A restore that has not ended and reads this backup, by DataUpload name or by (a prefix of) its snapshot ID. */
export function readerOf(
  du: { metadata: { name: string; namespace?: string }; status?: { snapshotID?: string } },
  downloads: readonly DataDownload[],
): DataDownload | undefined {
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

export interface RetentionPlan<T = DataUpload> {
  delete: T[];
  /** backups the keep-policy would delete but a rule above it keeps, with why */
  spared: { name: string; why: string }[];
}

/**
 * The keep-policy applied to each group of Completed backups (a PVC's DataUploads, a schedule's AppBackups), and
 * the two rules above it: the group's only Completed backup stays (`onlyOne` says of what), and so does one that
 * `readerOf` names a restore in progress of.
 */
export function planGroups<T extends Timed>(
  groups: Iterable<T[]>,
  reader: (backup: T) => string | undefined,
  onlyOne: string,
  rules: KeepRules,
  timeZone: string,
): RetentionPlan<T> {
  const plan: RetentionPlan<T> = { delete: [], spared: [] };
  for (const group of groups) {
    const items = group.map((backup) => ({ backup, time: backupTime(backup) }));
    const { keep, remove } = applyRetention(items, rules, timeZone);
    remove.forEach((item, i) => {
      const readBy = reader(item.backup);
      if (keep.length === 0 && i === 0) plan.spared.push({ name: item.backup.metadata.name, why: onlyOne });
      else if (readBy) plan.spared.push({ name: item.backup.metadata.name, why: `${readBy} is reading it` });
      else plan.delete.push(item.backup);
    });
  }
  return plan;
}

export function planRetention(
  uploads: readonly DataUpload[],
  downloads: readonly DataDownload[],
  rules: KeepRules,
  timeZone: string,
): RetentionPlan {
  const byPVC = new Map<string, DataUpload[]>();
  for (const du of uploads) {
    if (du.status?.phase !== 'Completed' || du.metadata.deletionTimestamp) continue;
    byPVC.set(du.spec.sourcePVC, [...(byPVC.get(du.spec.sourcePVC) ?? []), du]);
  }
  const reader = (du: DataUpload): string | undefined => {
    const dd = readerOf(du, downloads);
    return dd && `DataDownload ${dd.metadata.namespace}/${dd.metadata.name}`;
  };
  return planGroups(byPVC.values(), reader, 'it is the only Completed backup of its PVC', rules, timeZone);
}
