// The columns of `ferry copies get` and `ferry copy-policy get`: what the CRDs' printer columns show, plus more
// with -o wide.
import type { CopyPolicy, DataCopy } from '../../shared/api/copy.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { formatBytes } from '../output.ts';
import type { Column } from '../resource/table.ts';
import { age } from '../resource/time.ts';

export type StoredCopy = DataCopy & KubeObject;
export type StoredPolicy = CopyPolicy & KubeObject;

function progress(c: StoredCopy): string {
  const p = c.status?.progress;
  if (!p || p.totalBytes === 0) return c.status?.phase === 'Completed' ? '100%' : '';
  return `${p.percent ?? Math.floor((p.bytesDone / p.totalBytes) * 100)}%`;
}

export function copyColumns(allNamespaces: boolean): Column<StoredCopy>[] {
  return [
    ...(allNamespaces ? [{ header: 'namespace', value: (c: StoredCopy) => c.metadata.namespace ?? '' }] : []),
    { header: 'name', value: (c) => c.metadata.name },
    { header: 'phase', value: (c) => (c.metadata.deletionTimestamp ? 'Deleting' : (c.status?.phase ?? 'New')) },
    { header: 'dataupload', value: (c) => c.spec.dataUpload },
    { header: 'location', value: (c) => c.spec.backupStorageLocation },
    { header: 'progress', value: progress },
    { header: 'age', value: (c) => age(c.metadata.creationTimestamp) },
    { header: 'policy', value: (c) => c.spec.policy ?? '', wide: true },
    { header: 'attempts', value: (c) => String(c.status?.attempts ?? 0), wide: true },
    { header: 'snapshot', value: (c) => c.status?.snapshotID?.slice(0, 8) ?? '', wide: true },
    { header: 'sent', value: (c) => (c.status?.stats ? formatBytes(c.status.stats.bytesSent) : ''), wide: true },
    { header: 'expire', value: (c) => c.spec.expire ?? '', wide: true },
    { header: 'message', value: (c) => c.status?.message ?? '', wide: true },
  ];
}

export const policyColumns: Column<StoredPolicy>[] = [
  { header: 'name', value: (p) => p.metadata.name },
  { header: 'source', value: (p) => p.spec.sourceLocation },
  { header: 'destination', value: (p) => p.spec.destinationLocation },
  { header: 'copies', value: (p) => String(p.status?.copiesCompleted ?? 0) },
  { header: 'retrying', value: (p) => String(p.status?.copiesRetrying ?? 0) },
  { header: 'suspend', value: (p) => String(p.spec.suspend ?? false) },
  { header: 'age', value: (p) => age(p.metadata.creationTimestamp) },
  { header: 'namespaces', value: (p) => p.spec.namespaces?.join(',') ?? '*', wide: true },
  { header: 'schedules', value: (p) => p.spec.schedules?.join(',') ?? '', wide: true },
  { header: 'expire', value: (p) => p.spec.expire ?? '', wide: true },
  {
    header: 'last copy',
    value: (p) => (p.status?.lastCopyTime ? `${age(p.status.lastCopyTime)} ago` : ''),
    wide: true,
  },
];
