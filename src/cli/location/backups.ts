// `ferry location backups LOCATION [--namespace NS] [--json]`: the backups a location holds, read from its bucket
// with its own credentials and derived passwords (./holdings.ts), so a second cluster sees what the first site
// wrote before anything of it exists there: namespace, snapshot, time, DataUpload, PVC, size.
import { defineCommand } from 'citty';
import { LocationError } from '../../shared/location/access.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { consola } from '../console.ts';
import { formatBytes, printJSON } from '../output.ts';
import { withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { renderTable } from '../resource/table.ts';
import { UsageError } from '../run.ts';
import { locationKubeArgs } from './flags.ts';
import { namespaceName } from '../../shared/location/bucket-namespaces.ts';
import { locationHoldings, type Holdings } from './holdings.ts';

/** --namespace: a namespace name, else bad usage saying what one is. */
export function namespaceFlag(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const text = value === true ? '' : String(value);
  if (!namespaceName.test(text))
    throw new UsageError(
      `--namespace "${text}" is not a namespace name: up to 63 lower-case letters, digits and '-', starting and ending with a letter or digit`,
    );
  return text;
}

/** The table: one row per backup, oldest first within each namespace. */
export function holdingsTable(h: Holdings): string {
  return renderTable(
    ['Namespace', 'Snapshot', 'Time', 'DataUpload', 'PVC', 'Size'],
    h.backups.map((b) => [
      b.namespace,
      b.snapshotID.slice(0, 8),
      b.time,
      b.dataUpload ?? '',
      b.pvc ?? '',
      b.size === undefined ? '' : formatBytes(b.size),
    ]),
  );
}

/** The holdings; a location that does not exist is bad usage naming LOCATION and the locations there are. */
export async function readHoldings(
  kube: Kube,
  ferryNamespace: string,
  location: string,
  namespace: string | undefined,
): Promise<Holdings> {
  try {
    return await locationHoldings(kube, ferryNamespace, location, namespace);
  } catch (err) {
    if (!(err instanceof LocationError)) throw err;
    const names = (await kube.list<KubeObject>('BackupStorageLocation', { namespace: ferryNamespace }))
      .map((l) => l.metadata.name)
      .sort();
    if (names.includes(location)) throw err;
    throw new UsageError(
      `LOCATION: "${location}" is not a storage location in ${ferryNamespace}; the locations are: ${names.join(', ') || 'none'}`,
    );
  }
}

export default defineCommand({
  meta: {
    name: 'backups',
    description: "List the backups a location holds, read from its bucket (every namespace's repository)",
  },
  args: {
    name: { type: 'positional', required: true, description: 'the storage location', valueHint: 'LOCATION' },
    namespace: {
      type: 'string',
      alias: 'n',
      description: "only this namespace's repository (default: every namespace the bucket has)",
      valueHint: 'NS',
    },
    json: { type: 'boolean', description: 'print JSON', default: false },
    ...locationKubeArgs,
  },
  async run({ args }) {
    const location = objectName(args.name, 'LOCATION');
    const namespace = namespaceFlag(args.namespace);
    await withKube(args, async ({ kube, ferryNamespace }) => {
      const holdings = await readHoldings(kube, ferryNamespace, location, namespace);
      if (args.json) printJSON(holdings);
      else if (holdings.backups.length === 0)
        process.stderr.write(
          `No backups found in location ${location}${namespace ? ` for namespace ${namespace}` : ''}.\n`,
        );
      else process.stdout.write(holdingsTable(holdings));
      for (const p of holdings.problems) consola.warn(`namespace ${p.namespace}: ${p.message}`);
      if (holdings.problems.length > 0)
        throw new Error(`${holdings.problems.length} of the location's repositories could not be read (see above).`);
    });
  },
});
