// `ferry location get [NAME]`: the storage locations as a table (more with -o wide), or the objects (-o json|yaml).
import { defineCommand } from 'citty';
import type { Column } from '../resource/table.ts';
import { age } from '../resource/time.ts';
import { printGet } from '../resource/get.ts';
import { withKube } from '../resource/kube.ts';
import { optionalName } from '../resource/names.ts';
import { outputArgs, outputFormat } from '../resource/output.ts';
import type { StoredLocation } from '../../shared/location/check.ts';
import { locationKubeArgs } from './flags.ts';

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

export default defineCommand({
  meta: { name: 'get', description: 'List the storage locations, or show one' },
  args: {
    name: {
      type: 'positional',
      required: false,
      description: 'the location to show (default: all)',
      valueHint: 'NAME',
    },
    ...locationKubeArgs,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const name = optionalName(args.name, 'NAME');
    await withKube(args, ({ kube, ferryNamespace }) =>
      printGet<StoredLocation>(kube, {
        kind: 'BackupStorageLocation',
        namespace: ferryNamespace,
        name,
        format,
        columns: () => locationColumns,
      }),
    );
  },
});
