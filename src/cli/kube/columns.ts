// The columns of `ferry backup get` and `ferry restore get`: what the CRDs' printer columns show, plus more with
// -o wide.
import type { DataDownload, DataUpload, ResourceKind } from '../../shared/api/types.ts';
import { formatBytes } from '../output.ts';
import type { Column } from '../resource/table.ts';
import { age } from '../resource/time.ts';
import type { Resource } from './kinds.ts';

function progress(r: Resource): string {
  const p = r.status?.progress;
  if (!p || p.totalBytes === 0) return r.status?.phase === 'Completed' ? '100%' : '';
  return `${p.percent ?? Math.floor((p.bytesDone / p.totalBytes) * 100)}%`;
}

function bytes(r: Resource): string {
  const p = r.status?.progress;
  return p ? `${formatBytes(p.bytesDone)}/${formatBytes(p.totalBytes)}` : '';
}

function source(r: Resource): string {
  if (r.kind === 'DataUpload') return (r as DataUpload).spec.sourcePVC;
  const s = (r as DataDownload).spec.source;
  if (s.dataUpload) return `backup ${s.dataUpload.namespace ? `${s.dataUpload.namespace}/` : ''}${s.dataUpload.name}`;
  return s.snapshotID ? `snapshot ${s.snapshotID.slice(0, 8)}` : '';
}

/**
 * The phase, or that the resource is being deleted and what that waits for: a backup a restore still reads keeps
 * its finalizer (and its phase, Completed) until the restore ends.
 */
export function phaseOf(r: Resource): string {
  const phase = r.status?.phase ?? 'New';
  if (!r.metadata.deletionTimestamp) return phase;
  const waiting = r.status?.conditions?.find((c) => c.type === 'RepositoryDataDeleted' && c.status === 'False');
  const reader =
    waiting?.reason === 'RestoreReading' ? /DataDownload (\S+) is reading/.exec(waiting.message ?? '') : null;
  if (reader) return `Deleting (waits for restore ${reader[1]})`;
  if (waiting?.reason === 'DeleteFailed') return 'Deleting (freeing its data failed; retrying)';
  return `Deleting (was ${phase})`;
}

const common: Column<Resource>[] = [
  { header: 'name', value: (r) => r.metadata.name },
  { header: 'phase', value: phaseOf },
  { header: 'progress', value: progress },
  { header: 'bytes', value: bytes },
  { header: 'location', value: (r) => r.spec.backupStorageLocation },
  { header: 'age', value: (r) => age(r.metadata.creationTimestamp) },
];

const wide: Record<ResourceKind, Column<Resource>[]> = {
  DataUpload: [
    { header: 'pvc', value: source, wide: true },
    { header: 'snapshot', value: (r) => r.status?.snapshotID?.slice(0, 8) ?? '', wide: true },
    { header: 'node', value: (r) => r.status?.node ?? '', wide: true },
    { header: 'message', value: (r) => r.status?.message ?? '', wide: true },
  ],
  DataDownload: [
    { header: 'from', value: source, wide: true },
    { header: 'pvc', value: (r) => (r as DataDownload).spec.targetPVC.name, wide: true },
    { header: 'node', value: (r) => r.status?.node ?? '', wide: true },
    { header: 'message', value: (r) => r.status?.message ?? '', wide: true },
  ],
};

const namespaceColumn: Column<Resource> = { header: 'namespace', value: (r) => r.metadata.namespace ?? '' };

export function columnsFor(kind: ResourceKind, allNamespaces: boolean): Column<Resource>[] {
  return [...(allNamespaces ? [namespaceColumn] : []), ...common, ...wide[kind]];
}
