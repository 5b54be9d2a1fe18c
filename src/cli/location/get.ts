// `ferry location get [NAME]`: the storage locations as a table (more with -o wide), or the objects (-o json|yaml).
import { getCommand } from '../resource/get-command.ts';
import type { Column } from '../resource/table.ts';
import { age } from '../resource/time.ts';
import type { StoredLocation } from '../../shared/location/check.ts';

export const locationColumns: Column<StoredLocation>[] = [
  { header: 'name', value: (l) => l.metadata.name },
  { header: 'phase', value: (l) => l.status?.phase ?? 'Unknown' },
  { header: 'endpoint', value: (l) => l.spec.s3.endpoint },
  { header: 'bucket', value: (l) => l.spec.s3.bucket },
  { header: 'prefix', value: (l) => l.spec.s3.prefix ?? '' },
  { header: 'age', value: (l) => age(l.metadata.creationTimestamp) },
  { header: 'region', value: (l) => l.spec.s3.region ?? '', wide: true },
  { header: 'namespaces', value: (l) => l.spec.allowedNamespaces.join(','), wide: true },
  { header: 'credentials', value: (l) => l.spec.credential.name, wide: true },
  {
    header: 'checked',
    value: (l) => (l.status?.lastValidationTime ? `${age(l.status.lastValidationTime)} ago` : ''),
    wide: true,
  },
  { header: 'message', value: (l) => l.status?.message ?? '', wide: true },
];

export default getCommand<StoredLocation>({
  kind: 'BackupStorageLocation',
  description: 'List the storage locations, or show one',
  nameDescription: 'the location to show (default: all)',
  inFerryNamespace: true,
  columns: () => locationColumns,
});
