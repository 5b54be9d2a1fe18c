// `ferry restore ...`: DataDownloads, each restoring one backup into a PVC (new, or existing and unbound).
import { defineCommand } from 'citty';
import { apiVersion, type DataDownload, type DataUpload } from '../../shared/api/types.ts';
import { KubeError } from '../../shared/kube/errors.ts';
import type { Kube } from '../../shared/kube/kube.ts';
import type { PersistentVolumeClaim } from '../../shared/kube/objects.ts';
import { quantity as quantityPattern } from '../../shared/api/fields/common.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName, optionalName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat } from '../resource/output.ts';
import { UsageError } from '../run.ts';
import { createResource } from './create.ts';
import { deleteCommand } from './delete.ts';
import { describeCommand } from './describe.ts';
import { getCommand } from './get.ts';
import type { Resource } from './kinds.ts';
import { logsCommand } from './logs.ts';
import { printCreated } from './result.ts';
import { operationTimeout } from './timeout.ts';
import { waitForEnd } from './wait.ts';
import { waitCommand } from './wait-command.ts';

/** The backup restored from, when the user may read it: it gives the defaults for --location and --pvc. */
async function readBackup(kube: Kube, namespace: string, name: string): Promise<DataUpload | undefined> {
  try {
    const du = await kube.get<DataUpload & Resource>({ kind: 'DataUpload', namespace, name });
    if (!du)
      throw new Error(
        `DataUpload "${name}" not found in namespace ${namespace}: --from names a backup in the namespace (-n).`,
      );
    return du;
  } catch (err) {
    if (err instanceof KubeError && err.status === 403) return undefined;
    throw err;
  }
}

const fieldFlags = {
  'metadata.name': 'NAME',
  'spec.targetPVC': '--pvc',
  'spec.backupStorageLocation': '--location',
  'spec.source.dataUpload': '--from',
  'spec.operationTimeout': '--timeout',
  'spec.targetPVC.storageClassName': '--storage-class',
  'spec.targetPVC.size': '--size',
  'spec.sourceNamespace': '--to-namespace',
};

/** How to allow a restore the location refuses for reading another namespace's backups. */
function crossNamespaceFix(location: { name: string; namespace: string }, from: string, into: string): string {
  const rule = JSON.stringify({ spec: { crossNamespaceRestores: [{ from, to: [into] }] } });
  return (
    ` The location allows it with a rule: \`ferry location create ... --cross-namespace-restores ${from}=${into}\` for a new one, ` +
    `or \`kubectl patch bsl ${location.name} -n ${location.namespace} --type merge -p '${rule}'\` (the patch replaces the rules already there).`
  );
}

const quantity = new RegExp(quantityPattern.regex);

/** The PVC, when it exists and the user may read it. */
async function readClaim(kube: Kube, namespace: string, name: string): Promise<PersistentVolumeClaim | undefined> {
  try {
    return await kube.get<PersistentVolumeClaim>({ kind: 'PersistentVolumeClaim', namespace, name });
  } catch (err) {
    if (err instanceof KubeError && err.status === 403) return undefined;
    throw err;
  }
}

/**
 * The StorageClass of the backed-up PVC, as the backup recorded it (or, for a backup made before ferry recorded it,
 * the PVC's if it is still there): a new PVC keeps it (as Velero does) rather than take the cluster's default class.
 * A target PVC that exists already keeps its own.
 */
async function sourceClass(
  kube: Kube,
  backup: DataUpload | undefined,
  target: { namespace: string; name: string },
): Promise<string | undefined> {
  if (!backup || (await readClaim(kube, target.namespace, target.name))) return undefined;
  if (backup.status?.storageClassName) return backup.status.storageClassName;
  const source = await readClaim(kube, backup.metadata.namespace ?? '', backup.spec.sourcePVC);
  return source?.spec.storageClassName || undefined;
}

const create = defineCommand({
  meta: {
    name: 'create',
    description: 'Restore a backup into a PVC: create a DataDownload (and with --wait, follow it to the end)',
  },
  args: {
    name: {
      type: 'positional',
      required: true,
      description: 'name of the restore (the DataDownload)',
      valueHint: 'NAME',
    },
    from: {
      type: 'string',
      description: 'the backup (DataUpload) to restore, in the namespace (-n)',
      valueHint: 'BACKUP',
    },
    'to-namespace': {
      type: 'string',
      description: "namespace to restore into (default: the backup's)",
      valueHint: 'NS',
    },
    pvc: {
      type: 'string',
      description: 'PVC to restore into (default: the name of the backed-up PVC)',
      valueHint: 'PVC',
    },
    location: {
      type: 'string',
      description: "BackupStorageLocation holding the backup (default: the backup's)",
      valueHint: 'LOCATION',
    },
    'storage-class': {
      type: 'string',
      description: "StorageClass of the new PVC (default: the backed-up PVC's, else the cluster's default)",
      valueHint: 'CLASS',
    },
    size: {
      type: 'string',
      description: 'size of the new PVC, e.g. 20Gi (default: the size of the backed-up volume)',
      valueHint: 'QUANTITY',
    },
    timeout: {
      type: 'string',
      description: 'how long each step may take, e.g. 30m (default 10m)',
      valueHint: 'DURATION',
    },
    wait: {
      type: 'boolean',
      description: 'follow the restore until it ends (exit 0 Completed, 1 Failed, 3 Canceled)',
      default: false,
    },
    ...kubeArgs,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const name = objectName(args.name, 'NAME');
    const from = objectName(args.from, '--from');
    const target = optionalName(args['to-namespace'], '--to-namespace');
    const pvcFlag = optionalName(args.pvc, '--pvc');
    const locationFlag = optionalName(args.location, '--location');
    const classFlag = optionalName(args['storage-class'], '--storage-class');
    const size = args.size;
    if (size !== undefined && !quantity.test(size))
      throw new UsageError(`--size "${size}" is not ${quantityPattern.allowed}`);
    const timeout = args.timeout === undefined ? undefined : operationTimeout(args.timeout);
    await withKube(args, async ({ kube, namespace, ferryNamespace }) => {
      const backup = pvcFlag && locationFlag && classFlag ? undefined : await readBackup(kube, namespace, from);
      const pvc = pvcFlag ?? backup?.spec.sourcePVC;
      const location = locationFlag ?? backup?.spec.backupStorageLocation;
      if (!pvc || !location)
        throw new UsageError(`you may not read backup ${namespace}/${from}: pass --pvc and --location`);
      const into = target ?? namespace;
      const storageClassName = classFlag ?? (await sourceClass(kube, backup, { namespace: into, name: pvc }));
      const dd: DataDownload = {
        apiVersion,
        kind: 'DataDownload',
        metadata: { name, namespace: into },
        spec: {
          targetPVC: {
            name: pvc,
            ...(storageClassName ? { storageClassName } : {}),
            ...(size ? { size } : {}),
          },
          backupStorageLocation: location,
          source: { dataUpload: { name: from, namespace } },
          ...(timeout ? { operationTimeout: timeout } : {}),
        },
      };
      let r = await createResource(kube, dd as Resource, fieldFlags).catch((err: unknown) => {
        if (err instanceof Error && err.message.includes('does not allow restores from namespace'))
          err.message += crossNamespaceFix({ name: location, namespace: ferryNamespace }, namespace, into);
        throw err;
      });
      if (args.wait) r = await waitForEnd(kube, 'DataDownload', into, name, { quiet: isDocument(format) });
      printCreated(r, format, args.wait);
    });
  },
});

export default defineCommand({
  meta: { name: 'restore', description: 'Restore backups into PVCs and follow the restores (DataDownloads)' },
  subCommands: {
    create,
    get: getCommand('DataDownload'),
    describe: describeCommand('DataDownload'),
    delete: deleteCommand('DataDownload'),
    logs: logsCommand('DataDownload'),
    wait: waitCommand('DataDownload'),
  },
});
