// `ferry schedule get [NAME]`: the schedules as a table (more with -o wide), or the objects (-o json|yaml).
import { getCommand } from '../resource/get-command.ts';
import type { Column } from '../resource/table.ts';
import { age } from '../resource/time.ts';
import type { Schedule } from './create.ts';

const ago = (t: string | undefined): string => (t ? `${age(t)} ago` : '');

export function scheduleColumns(allNamespaces: boolean): Column<Schedule>[] {
  return [
    ...(allNamespaces ? [{ header: 'namespace', value: (s: Schedule) => s.metadata.namespace ?? '' }] : []),
    { header: 'name', value: (s) => s.metadata.name },
    { header: 'schedule', value: (s) => s.spec.schedule },
    { header: 'suspend', value: (s) => String(s.spec.suspend ?? false) },
    { header: 'last run', value: (s) => s.status?.lastRun?.outcome ?? '' },
    { header: 'last schedule', value: (s) => ago(s.status?.lastScheduleTime) },
    { header: 'location', value: (s) => s.spec.backupStorageLocation },
    { header: 'age', value: (s) => age(s.metadata.creationTimestamp) },
    { header: 'time zone', value: (s) => s.spec.timeZone ?? 'UTC', wide: true },
    {
      header: 'pvcs',
      value: (s) =>
        [
          ...(s.spec.pvcs ?? []),
          ...Object.entries(s.spec.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
        ].join(','),
      wide: true,
    },
    { header: 'next', value: (s) => s.status?.nextScheduleTime ?? '', wide: true },
    { header: 'last success', value: (s) => ago(s.status?.lastSuccessfulTime), wide: true },
  ];
}

export default getCommand<Schedule>({
  kind: 'BackupSchedule',
  description: 'List the backup schedules, or show one',
  nameDescription: 'the schedule to show (default: all in the namespace)',
  columns: scheduleColumns,
});
