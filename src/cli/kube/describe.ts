// `ferry backup describe NAME` and `ferry restore describe NAME`: everything needed to understand one resource
// without reading YAML: phase history, conditions, the step Jobs with how they ended and what they said,
// progress, the repository snapshot, sizes, timings and Events. -o json|yaml prints the same as one document.
import { defineCommand } from 'citty';
import type { DataDownload, DataUpload, ResourceKind } from '../../shared/api/types.ts';
import type { Kube } from '../../shared/kube/kube.ts';
import { formatBytes } from '../output.ts';
import { renderDescribe, type Field, type Section } from '../resource/describe.ts';
import { eventsAbout, type EventLine } from '../resource/events.ts';
import { fetchOne } from '../resource/fetch.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import { between, timeAndAge, timestamp } from '../resource/time.ts';
import { phaseHistory, type PhaseEntry } from './history.ts';
import { showOneArgs, nouns, type Resource } from './kinds.ts';
import { stepJobsOf, type JobRun } from './step-jobs.ts';
import { phaseOf } from './columns.ts';

export interface Description {
  object: Resource;
  phaseHistory: PhaseEntry[];
  jobs: JobRun[];
  events: EventLine[];
}

export async function describeResource(
  kube: Kube,
  ferryNamespace: string,
  kind: ResourceKind,
  namespace: string,
  name: string,
): Promise<Description> {
  const object = await fetchOne<Resource>(kube, kind, namespace, name);
  const [jobs, events] = await Promise.all([stepJobsOf(kube, ferryNamespace, object), eventsAbout(kube, object)]);
  return { object, phaseHistory: phaseHistory(object), jobs, events };
}

function specFields(r: Resource): Field[] {
  if (r.kind === 'DataUpload') {
    const s = (r as DataUpload).spec;
    return [
      ['Source PVC', s.sourcePVC],
      ['Move data', s.snapshotMoveData === false ? 'no (the CSI snapshot is the backup)' : 'yes'],
      ['Cancel requested', s.cancel ? 'yes' : undefined],
    ];
  }
  const s = (r as DataDownload).spec;
  const from = s.source.dataUpload
    ? `backup ${s.source.dataUpload.namespace ?? r.metadata.namespace}/${s.source.dataUpload.name}`
    : `snapshot ${s.source.snapshotID}`;
  return [
    ['From', from],
    ['Target PVC', s.targetPVC.name],
    ['Cancel requested', s.cancel ? 'yes' : undefined],
  ];
}

function sizes(r: Resource): Field[] {
  const st = r.status?.stats;
  if (!st) return [];
  const rate = st.durationSeconds > 0 ? `${formatBytes(st.bytes / st.durationSeconds)}/s` : undefined;
  const time: Field = ['Transfer time', `${st.durationSeconds.toFixed(1)}s${rate ? ` (${rate})` : ''}`];
  // a restore adds nothing to the repository: what it wrote is all there is to say
  if (r.kind === 'DataDownload') return [['Restored', `${formatBytes(st.bytes)} in ${st.files} files`], time];
  return [
    ['Total', `${formatBytes(st.bytes)} in ${st.files} files`],
    ['Added', formatBytes(st.bytesAdded)],
    ['Deduplicated', formatBytes(Math.max(0, st.bytes - st.bytesAdded))],
    ['Stored', formatBytes(st.bytesStored)],
    time,
  ];
}

function jobLines(jobs: readonly JobRun[]): string[] {
  const out: string[] = [];
  for (const j of jobs) {
    out.push(
      `${j.step} attempt ${j.attempt}: Job ${j.name} ${j.state}${j.node ? ` on ${j.node}` : ''}${j.message ? ` (${j.message})` : ''}`,
    );
    for (const p of j.pods) {
      const exit = p.exitCode === undefined ? p.phase : `exit ${p.exitCode}${p.reason ? ` (${p.reason})` : ''}`;
      const took = p.finishedAt ? ` after ${between(p.startedAt, p.finishedAt)}` : '';
      out.push(`  pod ${p.name}: ${exit}${took}`);
      if (p.terminationMessage) out.push(`    termination message: ${p.terminationMessage}`);
    }
  }
  return out;
}

export function renderDescription(d: Description): string {
  const r = d.object;
  const s = r.status ?? {};
  const top: Field[] = [
    ['Name', r.metadata.name],
    ['Namespace', r.metadata.namespace],
    ['Kind', r.kind],
    ['Phase', phaseOf(r)],
    ['Message', s.message],
    ...specFields(r),
    ['Location', r.spec.backupStorageLocation],
    ['Node', s.node],
    ['Snapshot ID', s.snapshotID],
    ['Parent snapshot', r.kind === 'DataUpload' ? (r as DataUpload).status?.parentSnapshotID : undefined],
    ['Created', timeAndAge(r.metadata.creationTimestamp)],
    ['Started', timestamp(s.startTimestamp)],
    ['Completed', timestamp(s.completionTimestamp)],
    ['Duration', between(r.metadata.creationTimestamp, s.completionTimestamp)],
    ['Deleting', r.metadata.deletionTimestamp ? `since ${timestamp(r.metadata.deletionTimestamp)}` : undefined],
  ];
  const p = s.progress;
  const sections: Section[] = [
    {
      title: 'Progress',
      fields: p
        ? [
            ['Bytes', `${formatBytes(p.bytesDone)} of ${formatBytes(p.totalBytes)}`],
            ['Percent', `${p.percent ?? 0}%`],
          ]
        : [],
    },
    { title: 'Sizes', fields: sizes(r) },
    {
      title: 'Phase history',
      table: {
        headers: ['time', 'phase', 'step', 'note'],
        rows: d.phaseHistory.map((h) => [
          timestamp(h.time) || '-',
          h.phase,
          h.step ? `${h.step}${h.attempts && h.attempts > 1 ? ` (${h.attempts} attempts)` : ''}` : '',
          h.note ?? '',
        ]),
      },
    },
    {
      title: 'Conditions',
      table: {
        headers: ['type', 'status', 'reason', 'since', 'message'],
        rows: (s.conditions ?? []).map((c) => [
          c.type,
          c.status,
          c.reason,
          timestamp(c.lastTransitionTime) ?? '',
          c.message,
        ]),
      },
    },
    { title: 'Jobs', lines: jobLines(d.jobs) },
    {
      title: 'Events',
      table: {
        headers: ['time', 'type', 'reason', 'from', 'message'],
        rows: d.events.map((e) => [
          timestamp(e.time) ?? '',
          e.type,
          e.reason,
          e.from,
          e.count > 1 ? `${e.note} (x${e.count})` : e.note,
        ]),
      },
    },
  ];
  return renderDescribe(top, sections);
}

export function describeCommand(kind: ResourceKind) {
  return defineCommand({
    meta: { name: 'describe', description: `Show one ${nouns[kind]} (${kind}) in detail: phases, Jobs, sizes, Events` },
    args: showOneArgs(kind),
    async run({ args }) {
      const format = outputFormat(args);
      const name = objectName(args.name, 'NAME');
      await withKube(args, async ({ kube, namespace, ferryNamespace }) => {
        const d = await describeResource(kube, ferryNamespace, kind, namespace, name);
        if (isDocument(format)) printDocument(d, format);
        else process.stdout.write(renderDescription(d));
      });
    },
  });
}
