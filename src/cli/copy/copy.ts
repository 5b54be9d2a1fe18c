// `ferry copy DATAUPLOAD --to LOCATION`: copies one backup into another location by hand (a DataCopy named
// `<dataupload>-to-<location>`, so a second copy to the same place finds the first), checked here first so a
// mistake names the flag: the backup must be Completed, the location must exist, differ from the backup's and allow
// the namespace. Admission checks the same on the cluster side. With --wait, follows the copy to its end.
import { defineCommand } from 'citty';
import type { DataCopy } from '../../shared/api/copy.ts';
import { apiVersion, type BackupStorageLocation, type DataUpload } from '../../shared/api/types.ts';
import { copyInLocation } from '../../shared/copy/existing.ts';
import { manualCopyName } from '../../shared/copy/names.ts';
import { KubeError } from '../../shared/kube/errors.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { backupAllowed } from '../../shared/location/namespaces.ts';
import { createResource } from '../kube/create.ts';
import { durationFlag, operationTimeout } from '../kube/timeout.ts';
import { waitForEnd } from '../kube/wait.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat } from '../resource/output.ts';
import { UsageError } from '../run.ts';
import { printCopy } from './result.ts';
import type { StoredCopy } from './columns.ts';

const fieldFlags = {
  'metadata.name': 'DATAUPLOAD',
  'spec.dataUpload': 'DATAUPLOAD',
  'spec.backupStorageLocation': '--to',
  'spec.expire': '--expire',
  'spec.operationTimeout': '--timeout',
};

export interface CopyRequest {
  dataUpload: string;
  to: string;
  namespace: string;
  ferryNamespace: string;
  expire?: string;
  timeout?: string;
}

/** The backup to copy, Completed; else bad usage naming DATAUPLOAD. */
async function completedUpload(kube: Kube, req: CopyRequest): Promise<DataUpload & KubeObject> {
  const du = await kube.get<DataUpload & KubeObject>({
    kind: 'DataUpload',
    namespace: req.namespace,
    name: req.dataUpload,
  });
  if (!du)
    throw new UsageError(`DATAUPLOAD: DataUpload "${req.dataUpload}" does not exist in namespace ${req.namespace}`);
  const phase = du.status?.phase ?? 'New';
  if (phase !== 'Completed' || !du.status?.snapshotID)
    throw new UsageError(
      `DATAUPLOAD: DataUpload "${req.dataUpload}" is ${phase}${phase === 'Completed' ? ' without a repository snapshot (a snapshot-only backup)' : ''}; only a Completed backup with its data in a repository can be copied`,
    );
  return du;
}

/** --to names a location that exists, is not the backup's own and allows the namespace (when it may be read). */
async function checkDestination(kube: Kube, req: CopyRequest, du: DataUpload): Promise<void> {
  if (req.to === du.spec.backupStorageLocation)
    throw new UsageError(`--to: the backup is already in location "${req.to}"; name another location`);
  let bsl: BackupStorageLocation | undefined;
  try {
    bsl = await kube.get<BackupStorageLocation & KubeObject>({
      kind: 'BackupStorageLocation',
      namespace: req.ferryNamespace,
      name: req.to,
    });
  } catch (err) {
    // a user who may not read the locations learns the rest from admission
    if (err instanceof KubeError && err.status === 403) return;
    throw err;
  }
  if (!bsl) {
    const names = (await kube.list<KubeObject>('BackupStorageLocation', { namespace: req.ferryNamespace }))
      .map((l) => l.metadata.name)
      .sort();
    throw new UsageError(`--to: location "${req.to}" does not exist; the locations are: ${names.join(', ') || 'none'}`);
  }
  if (bsl.spec.recoverVersions === true)
    throw new UsageError(
      `--to: location "${req.to}" has spec.recoverVersions (it is read past delete markers), so nothing may be written there`,
    );
  if (!backupAllowed(bsl.spec, req.namespace))
    throw new UsageError(
      `--to: location "${req.to}" allows namespaces [${bsl.spec.allowedNamespaces.join(', ')}], not "${req.namespace}"`,
    );
}

/** The DataCopy for a copy by hand: without --expire it lives as long as its backup (an owner reference). */
export function manualCopy(req: CopyRequest, du: DataUpload): DataCopy {
  const copy: DataCopy = {
    apiVersion,
    kind: 'DataCopy',
    metadata: { name: manualCopyName(req.dataUpload, req.to), namespace: req.namespace },
    spec: { dataUpload: req.dataUpload, backupStorageLocation: req.to },
  };
  if (req.timeout) copy.spec.operationTimeout = req.timeout;
  if (req.expire) copy.spec.expire = req.expire;
  else
    copy.metadata.ownerReferences = [
      { apiVersion, kind: 'DataUpload', name: du.metadata.name, uid: du.metadata.uid ?? '', blockOwnerDeletion: false },
    ];
  return copy;
}

/** Checks the request against the cluster, then creates the DataCopy; a copy of that name already there is said so. */
export async function createCopy(kube: Kube, req: CopyRequest): Promise<StoredCopy> {
  const du = await completedUpload(kube, req);
  await checkDestination(kube, req, du);
  const copy = manualCopy(req, du);
  const existing = copyInLocation(
    await kube.list<StoredCopy>('DataCopy', { namespace: req.namespace }),
    req.namespace,
    req.dataUpload,
    req.to,
  );
  if (existing)
    throw new Error(
      `DataUpload ${req.namespace}/${req.dataUpload} is already copied to "${req.to}" by DataCopy ${existing.metadata.name} (${existing.status?.phase ?? 'New'}); see \`ferry copies describe ${existing.metadata.name} -n ${req.namespace}\``,
    );
  return createResource(kube, copy as StoredCopy, fieldFlags);
}

export default defineCommand({
  meta: {
    name: 'copy',
    description: 'Copy a backup into another storage location (a DataCopy; with --wait, follow it to the end)',
  },
  args: {
    dataupload: {
      type: 'positional',
      required: true,
      description: 'the backup (DataUpload) to copy, Completed',
      valueHint: 'DATAUPLOAD',
    },
    to: { type: 'string', description: 'the BackupStorageLocation to copy into', valueHint: 'LOCATION' },
    expire: {
      type: 'string',
      description: 'delete the copy this long after it completed, e.g. 720h (default: with its backup)',
      valueHint: 'DURATION',
    },
    timeout: {
      type: 'string',
      description: 'how long one attempt may take, e.g. 1h',
      valueHint: 'DURATION',
    },
    wait: {
      type: 'boolean',
      description: 'follow the copy until it ends (exit 0 Completed, 1 Failed, 3 Canceled)',
      default: false,
    },
    ...kubeArgs,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const dataUpload = objectName(args.dataupload, 'DATAUPLOAD');
    const to = objectName(args.to, '--to');
    const expire = args.expire === undefined ? undefined : durationFlag(args.expire, '--expire');
    const timeout = args.timeout === undefined ? undefined : operationTimeout(args.timeout);
    await withKube(args, async ({ kube, namespace, ferryNamespace }) => {
      let copy = await createCopy(kube, { dataUpload, to, namespace, ferryNamespace, expire, timeout });
      if (args.wait)
        copy = await waitForEnd(kube, 'DataCopy', namespace, copy.metadata.name, { quiet: isDocument(format) });
      printCopy(copy, format, args.wait);
    });
  },
});
