// `ferry schedule describe NAME`: what it backs up and when, its last run PVC by PVC, the backups it made (newest
// first), conditions and events.
import { defineCommand } from 'citty';
import type { DataUpload } from '../../shared/api/types.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { scheduleSelector } from '../../shared/schedule/names.ts';
import { renderDescribe } from '../resource/describe.ts';
import { eventsAbout, type EventLine } from '../resource/events.ts';
import { isDocument, printDocument } from '../resource/output.ts';
import { age, timeAndAge as when, timestamp } from '../resource/time.ts';
import type { Schedule } from './create.ts';
import { oneScheduleArgs, withSchedule } from './one.ts';

type Upload = DataUpload & KubeObject;

export function describeSchedule(s: Schedule, uploads: readonly Upload[], events: readonly EventLine[]): string {
  const { spec, status } = s;
  const retention = Object.entries(spec.retention ?? {})
    .map(([k, v]) => `${k.replace(/^keep/, '').toLowerCase()} ${v}`)
    .join(', ');
  const run = status?.lastRun;
  return renderDescribe(
    [
      ['Name', s.metadata.name],
      ['Namespace', s.metadata.namespace],
      ['Created', when(s.metadata.creationTimestamp)],
    ],
    [
      {
        title: 'Schedule',
        fields: [
          ['Cron', spec.schedule],
          ['Time zone', spec.timeZone ?? 'UTC'],
          ['Suspended', String(spec.suspend ?? false)],
          ['Concurrency', spec.concurrencyPolicy ?? 'Forbid'],
          ['Jitter', spec.jitter],
        ],
      },
      {
        title: 'Backups',
        fields: [
          ['PVCs', spec.pvcs?.join(', ')],
          [
            'Selector',
            Object.entries(spec.selector?.matchLabels ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(',') || undefined,
          ],
          ['Location', spec.backupStorageLocation],
          ['Move data', String(spec.snapshotMoveData ?? true)],
          ['Expire', spec.expire],
          ['Retention', retention || undefined],
        ],
      },
      {
        title: 'Status',
        fields: [
          ['Last schedule', when(status?.lastScheduleTime)],
          ['Last success', when(status?.lastSuccessfulTime)],
          ['Next', timestamp(status?.nextScheduleTime)],
          ['Missed runs', status?.missedRuns],
          ['CronJob', status?.cronJob],
        ],
      },
      {
        title: 'Last run',
        fields: run
          ? [
              ['Run', run.run],
              ['Scheduled', timestamp(run.scheduledTime)],
              ['Outcome', run.outcome],
              ['Message', run.message],
              ['Deleted by retention', run.deleted?.join(', ')],
            ]
          : [],
        table: {
          headers: ['PVC', 'DataUpload', 'Phase', 'Message'],
          rows: (run?.pvcs ?? []).map((p) => [p.pvc, p.dataUpload ?? '', p.phase ?? '', p.message ?? '']),
        },
      },
      {
        title: 'DataUploads',
        table: {
          headers: ['Name', 'PVC', 'Phase', 'Age'],
          rows: uploads.map((u) => [
            u.metadata.name,
            u.spec.sourcePVC,
            u.status?.phase ?? 'New',
            age(u.metadata.creationTimestamp),
          ]),
        },
      },
      {
        title: 'Conditions',
        table: {
          headers: ['Type', 'Status', 'Reason', 'Message'],
          rows: (status?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]),
        },
      },
      {
        title: 'Events',
        table: {
          headers: ['Type', 'Reason', 'Age', 'From', 'Message'],
          rows: events.map((e) => [e.type, e.reason, age(e.time), e.from, e.note]),
        },
      },
    ],
  );
}

export default defineCommand({
  meta: {
    name: 'describe',
    description: 'Show a schedule in detail: last run per PVC, its backups, conditions, events',
  },
  args: oneScheduleArgs,
  async run({ args }) {
    await withSchedule(args, async ({ kube, namespace, schedule, format }) => {
      const name = schedule.metadata.name;
      const uploads = (
        await kube.list<Upload>('DataUpload', { namespace, labelSelector: scheduleSelector(name) })
      ).sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''));
      const events = await eventsAbout(kube, schedule);
      if (isDocument(format))
        printDocument({ schedule, dataUploads: uploads.map((u) => u.metadata.name), events }, format);
      else process.stdout.write(describeSchedule(schedule, uploads, events));
    });
  },
});
