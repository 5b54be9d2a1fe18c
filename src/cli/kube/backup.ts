// `ferry backup ...`: DataUploads, one backup of one PVC each.
import { defineCommand } from 'citty';
import { apiVersion, type DataUpload } from '../../shared/api/types.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName, optionalName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat } from '../resource/output.ts';
import { deleteCommand } from './delete.ts';
import { describeCommand } from './describe.ts';
import { getCommand } from './get.ts';
import type { Resource } from './kinds.ts';
import { createResource } from './create.ts';
import { defaultLocation } from './location.ts';
import { logsCommand } from './logs.ts';
import { printCreated } from './result.ts';
import { tagsFlag } from './tags.ts';
import { durationFlag, operationTimeout } from './timeout.ts';
import { waitForEnd } from './wait.ts';
import { waitCommand } from './wait-command.ts';

const fieldFlags = {
  'metadata.name': 'NAME',
  'spec.sourcePVC': '--pvc',
  'spec.backupStorageLocation': '--location',
  'spec.csiSnapshot.snapshotClass': '--snapshot-class',
  'spec.operationTimeout': '--timeout',
  'spec.expire': '--expire',
  'spec.tags': '--tag',
};

const create = defineCommand({
  meta: { name: 'create', description: 'Back up a PVC: create a DataUpload (and with --wait, follow it to the end)' },
  args: {
    name: {
      type: 'positional',
      required: true,
      description: 'name of the backup (the DataUpload)',
      valueHint: 'NAME',
    },
    pvc: { type: 'string', description: 'the PVC to back up, in the namespace', valueHint: 'PVC' },
    location: {
      type: 'string',
      description: 'BackupStorageLocation to back up into (default: the only one)',
      valueHint: 'LOCATION',
    },
    'snapshot-only': {
      type: 'boolean',
      description: 'keep the CSI snapshot as the backup and move no data',
      default: false,
    },
    'snapshot-class': {
      type: 'string',
      description: 'VolumeSnapshotClass of the snapshot (default: the cluster default for the driver)',
      valueHint: 'CLASS',
    },
    timeout: {
      type: 'string',
      description: 'how long the snapshot and each step may take, e.g. 30m (default 10m)',
      valueHint: 'DURATION',
    },
    expire: {
      type: 'string',
      description: 'delete the backup (and free its repository data) this long after it was made, e.g. 720h',
      valueHint: 'DURATION',
    },
    tag: {
      type: 'string',
      description: 'tag the repository snapshot, as key=value (repeatable)',
      valueHint: 'KEY=VALUE',
    },
    wait: {
      type: 'boolean',
      description: 'follow the backup until it ends (exit 0 Completed, 1 Failed, 3 Canceled)',
      default: false,
    },
    ...kubeArgs,
    ...outputArgs,
  },
  async run({ args, rawArgs }) {
    const format = outputFormat(args);
    const name = objectName(args.name, 'NAME');
    const pvc = objectName(args.pvc, '--pvc');
    const expire = args.expire === undefined ? undefined : durationFlag(args.expire, '--expire');
    const tags = tagsFlag(rawArgs);
    const location = optionalName(args.location, '--location');
    const snapshotClass = optionalName(args['snapshot-class'], '--snapshot-class');
    const timeout = args.timeout === undefined ? undefined : operationTimeout(args.timeout);
    await withKube(args, async ({ kube, namespace, ferryNamespace }) => {
      const du: DataUpload = {
        apiVersion,
        kind: 'DataUpload',
        metadata: { name, namespace },
        spec: {
          sourcePVC: pvc,
          backupStorageLocation: location ?? (await defaultLocation(kube, ferryNamespace)),
          ...(args['snapshot-only'] ? { snapshotMoveData: false } : {}),
          ...(snapshotClass ? { csiSnapshot: { snapshotClass } } : {}),
          ...(timeout ? { operationTimeout: timeout } : {}),
          ...(expire ? { expire } : {}),
          ...(tags ? { tags } : {}),
        },
      };
      let r = await createResource(kube, du as Resource, fieldFlags);
      if (args.wait) r = await waitForEnd(kube, 'DataUpload', namespace, name, { quiet: isDocument(format) });
      printCreated(r, format, args.wait);
    });
  },
});

export default defineCommand({
  meta: { name: 'backup', description: 'Back up PVCs and follow their backups (DataUploads)' },
  subCommands: {
    create,
    get: getCommand('DataUpload'),
    describe: describeCommand('DataUpload'),
    delete: deleteCommand('DataUpload'),
    logs: logsCommand('DataUpload'),
    wait: waitCommand('DataUpload'),
  },
});
