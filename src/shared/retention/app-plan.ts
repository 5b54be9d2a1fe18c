// Which AppBackups of a schedule retention deletes: the schedule's Completed AppBackups are one group (a run makes
// one AppBackup of all its volumes, so each counts once, at its run's scheduled time), with the rules of ./plan.ts
// above the keep-policy. An AppBackup is being read while an unfinished AppRestore names it, or an unfinished
// DataDownload reads one of its volumes' DataUploads: deleting it would delete those DataUploads under the restore.
import { appRestoreTerminalPhases } from '../api/app.ts';
import type { AppBackup, AppRestore } from '../api/app.ts';
import type { DataDownload } from '../api/types.ts';
import { planGroups, readerOf, type RetentionPlan } from './plan.ts';
import type { KeepRules } from './retention.ts';

function readingRestore(ab: AppBackup, restores: readonly AppRestore[]): AppRestore | undefined {
  return restores.find(
    (r) =>
      !appRestoreTerminalPhases.includes(r.status?.phase ?? 'New') &&
      r.spec.appBackup.name === ab.metadata.name &&
      (r.spec.appBackup.namespace ?? r.metadata.namespace) === ab.metadata.namespace,
  );
}

/** A DataDownload in progress reading one of the AppBackup's DataUploads. */
function readingDownload(ab: AppBackup, downloads: readonly DataDownload[]): DataDownload | undefined {
  for (const v of ab.status?.volumes ?? []) {
    if (!v.dataUpload) continue;
    const du = { metadata: { name: v.dataUpload, namespace: ab.metadata.namespace }, status: v };
    const dd = readerOf(du, downloads);
    if (dd) return dd;
  }
  return undefined;
}

export function planAppRetention<T extends AppBackup>(
  backups: readonly T[],
  restores: readonly AppRestore[],
  downloads: readonly DataDownload[],
  rules: KeepRules,
  timeZone: string,
): RetentionPlan<T> {
  const completed = backups.filter((ab) => ab.status?.phase === 'Completed' && !ab.metadata.deletionTimestamp);
  const reader = (ab: T): string | undefined => {
    const r = readingRestore(ab, restores);
    if (r) return `AppRestore ${r.metadata.namespace}/${r.metadata.name}`;
    const dd = readingDownload(ab, downloads);
    return dd && `DataDownload ${dd.metadata.namespace}/${dd.metadata.name}`;
  };
  return planGroups([completed], reader, 'it is the only Completed AppBackup of its schedule', rules, timeZone);
}
