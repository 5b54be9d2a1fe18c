// `ferry copies describe NAME` and `ferry copy-policy describe NAME`: what a copy copies where and how it went
// (attempts, the next one, what it sent), and what a policy copies and how its copies stand.
import type { Condition } from '../../shared/api/types.ts';
import { formatBytes } from '../output.ts';
import { renderDescribe, type Section } from '../resource/describe.ts';
import type { EventLine } from '../resource/events.ts';
import { age, timeAndAge as when, timestamp } from '../resource/time.ts';
import type { StoredCopy, StoredPolicy } from './columns.ts';

function conditions(list: readonly Condition[] | undefined): Section {
  return {
    title: 'Conditions',
    table: {
      headers: ['Type', 'Status', 'Reason', 'Message'],
      rows: (list ?? []).map((c) => [c.type, c.status, c.reason, c.message]),
    },
  };
}

function events(list: readonly EventLine[]): Section {
  return {
    title: 'Events',
    table: {
      headers: ['Type', 'Reason', 'Age', 'From', 'Message'],
      rows: list.map((e) => [e.type, e.reason, age(e.time), e.from, e.note]),
    },
  };
}

export function describeCopy(c: StoredCopy, eventLines: readonly EventLine[]): string {
  const { spec, status } = c;
  const p = status?.progress;
  const st = status?.stats;
  return renderDescribe(
    [
      ['Name', c.metadata.name],
      ['Namespace', c.metadata.namespace],
      ['Created', when(c.metadata.creationTimestamp)],
      ['Deleting', c.metadata.deletionTimestamp ? `since ${timestamp(c.metadata.deletionTimestamp)}` : undefined],
    ],
    [
      {
        title: 'Copy',
        fields: [
          ['DataUpload', spec.dataUpload],
          ['To location', spec.backupStorageLocation],
          ['Policy', spec.policy ?? '<by hand>'],
          ['Expire', spec.expire ? `${spec.expire} after completion` : 'with its DataUpload'],
          ['Timeout', spec.operationTimeout],
          ['Cancel', spec.cancel ? 'requested' : undefined],
        ],
      },
      {
        title: 'Status',
        fields: [
          ['Phase', status?.phase ?? 'New'],
          ['Source snapshot', status?.sourceSnapshotID],
          ['Snapshot', status?.snapshotID],
          ['Started', when(status?.startTimestamp)],
          ['Completed', when(status?.completionTimestamp)],
          ['Attempts', status?.attempts],
          ['Next attempt', timestamp(status?.nextAttemptTime)],
          ['Job', status?.job],
          ['Progress', p ? `${formatBytes(p.bytesDone)} of ${formatBytes(p.totalBytes)}` : undefined],
          ['Sent', st ? `${formatBytes(st.bytesSent)} in ${st.blobs} new blobs, ${st.durationSeconds}s` : undefined],
          ['Message', status?.message],
        ],
      },
      conditions(status?.conditions),
      events(eventLines),
    ],
  );
}

export function describePolicy(
  p: StoredPolicy,
  copies: readonly StoredCopy[],
  eventLines: readonly EventLine[],
): string {
  const { spec, status } = p;
  return renderDescribe(
    [
      ['Name', p.metadata.name],
      ['Namespace', p.metadata.namespace],
      ['Created', when(p.metadata.creationTimestamp)],
    ],
    [
      {
        title: 'Policy',
        fields: [
          ['Source', spec.sourceLocation],
          ['Destination', spec.destinationLocation],
          ['Namespaces', spec.namespaces?.join(', ') ?? 'every namespace the destination allows'],
          [
            'Selector',
            Object.entries(spec.selector?.matchLabels ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(',') || undefined,
          ],
          ['Schedules', spec.schedules?.join(', ')],
          ['Expire', spec.expire ? `${spec.expire} after each copy completes` : 'with their DataUploads'],
          ['Suspended', String(spec.suspend ?? false)],
        ],
      },
      {
        title: 'Status',
        fields: [
          ['Copies completed', status?.copiesCompleted ?? 0],
          ['Retrying', status?.copiesRetrying ?? 0],
          ['Last copy', when(status?.lastCopyTime)],
        ],
      },
      {
        title: 'DataCopies',
        table: {
          headers: ['Namespace', 'Name', 'DataUpload', 'Phase', 'Age'],
          rows: copies.map((c) => [
            c.metadata.namespace ?? '',
            c.metadata.name,
            c.spec.dataUpload,
            c.status?.phase ?? 'New',
            age(c.metadata.creationTimestamp),
          ]),
        },
      },
      conditions(status?.conditions),
      events(eventLines),
    ],
  );
}
