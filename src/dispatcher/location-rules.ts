// BackupStorageLocation at admission: its fields (from the same descriptions as the CRD), then what a field's
// pattern cannot say: an Object Lock retention in range (the rule the CLI's --object-lock applies), Object Lock
// and recoverVersions not both (one writes with retention, the other never writes), a backup sync schedule cron
// can run. A change that leaves the spec alone (status, labels, finalizers) is not judged again.
import { isDeepStrictEqual } from 'node:util';
import { retentionMs, retentionRule } from '../shared/api/object-lock.ts';
import type { BackupStorageLocation } from '../shared/api/types.ts';
import { cronProblem } from '../shared/schedule/cron.ts';
import { invalid } from './admission.ts';
import type { Denial } from './admission.ts';
import { fieldDenial } from './rules.ts';

type Spec = BackupStorageLocation['spec'];

function meaningProblems(spec: Spec): string[] {
  const problems: string[] = [];
  const retention = spec.objectLock?.retention;
  if (retention !== undefined && retentionMs(retention) === undefined)
    problems.push(`spec.objectLock.retention: "${retention}" must be a period ${retentionRule}, such as 30d or 720h`);
  if (spec.objectLock && spec.recoverVersions === true)
    problems.push(
      'spec.recoverVersions: cannot be set with spec.objectLock (recoverVersions only reads; objectLock is for a location ferry writes)',
    );
  const schedule = spec.backupSync?.schedule;
  const cron = schedule === undefined ? undefined : cronProblem(schedule);
  if (cron) problems.push(`spec.backupSync.schedule: ${cron}`);
  return problems;
}

export function checkLocation(next: { spec?: unknown }, old?: { spec?: unknown }): Denial | undefined {
  if (old && isDeepStrictEqual(old.spec, next.spec)) return undefined;
  const fields = fieldDenial('BackupStorageLocation', 'spec', next.spec);
  if (fields) return fields;
  const problems = meaningProblems(next.spec as Spec);
  return problems.length ? invalid(problems.join('; ')) : undefined;
}
