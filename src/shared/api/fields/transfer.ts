// DataUpload and DataDownload: one backup of a PVC into the repository, and one restore out of it.
import { arr, bool, int, obj, str } from '../field.ts';
import {
  goDuration,
  quantity,
  snapshotIDPattern,
  fullID,
  objectName,
  namespaceName,
  dataMover,
  operationTimeout,
  cancel,
  commonStatus,
  tags,
} from './common.ts';
import { backupCopies } from './copy.ts';

// ---- DataUpload ----

export const dataUploadSpec = obj(
  "Back up one PVC of this namespace: snapshot it, then move the snapshot's data into the repository.",
  {
    sourcePVC: objectName(
      'Name of the PersistentVolumeClaim to back up, in this namespace; it must exist and be bound.',
    ),
    backupStorageLocation: objectName(
      "BackupStorageLocation (in ferry's namespace) to store the data in; it must allow this namespace.",
    ),
    snapshotMoveData: bool('Move the data into the repository (true) or keep only the CSI snapshot (false).', {
      default: true,
    }),
    csiSnapshot: obj('How to take the CSI snapshot.', {
      volumeSnapshot: objectName(
        'An existing VolumeSnapshot of the PVC, in this namespace, to use instead of taking one.',
      ),
      snapshotClass: objectName("VolumeSnapshotClass for the new snapshot (default: the driver's default class)."),
      deleteWhenDone: bool(
        "Delete the VolumeSnapshot named in volumeSnapshot, its content and the storage snapshot (whatever the content's deletion policy) once the backup ends, as Velero expects of its data movers. A snapshot ferry takes itself is always deleted.",
        { default: false },
      ),
    }),
    dataMover: dataMover,
    operationTimeout,
    cancel,
    tags: tags('Tags recorded on the repository snapshot, as key=value.', 32),
    expire: str(
      'Delete this DataUpload (and free its repository data) this long after its creation, e.g. 720h; the annotation ferry.dev/retain-if-expired: "true" keeps it. Default: never.',
      { pattern: goDuration },
    ),
  },
  { required: ['sourcePVC', 'backupStorageLocation'] },
);

export const dataUploadStatus = obj('Progress and results of the backup, written by ferry.', {
  ...commonStatus,
  snapshotID: str('ID of the repository snapshot holding the data.', { pattern: fullID }),
  parentSnapshotID: str('ID of the repository snapshot this one was made incrementally from.', { pattern: fullID }),
  changeTracking: obj(
    "A block volume's changed-block tracking (the CSI driver's SnapshotMetadataService): what its snapshot is kept for, and how the device was read.",
    {
      driver: str('CSI driver of the snapshot, whose SnapshotMetadataService is asked.', { maxLength: 253 }),
      snapshotHandle: str(
        "The driver's handle of this backup's snapshot: the base the next backup's changed blocks are asked against.",
        { maxLength: 1024 },
      ),
      retainedContent: objectName(
        "VolumeSnapshotContent kept (deletion policy Retain) so the driver keeps snapshotHandle until the next backup of the PVC completes; that backup's finalize deletes it with the storage snapshot.",
      ),
      mode: str(
        'Changed: only blocks changed since the parent backup were read; Allocated: only allocated blocks; Full: the whole device.',
        { enum: ['Changed', 'Allocated', 'Full'] },
      ),
      bytesRead: int('Bytes read from the device.', { minimum: 0 }),
      reason: str(
        'Why a cheaper read was not used (no SnapshotMetadataService for the driver, the parent snapshot gone, ...).',
        { maxLength: 1024 },
      ),
    },
  ),
  volumeSnapshot: objectName('The CSI VolumeSnapshot of the source PVC, in this namespace.'),
  volumeMode: str('Volume mode of the source PVC.', { enum: ['Filesystem', 'Block'] }),
  storageClassName: objectName(
    'StorageClass of the source PVC, which `ferry restore create` gives a new PVC (as Velero does) when not told otherwise.',
  ),
  copies: backupCopies,
});

// ---- DataDownload ----

export const dataDownloadSpec = obj(
  'Restore data from the repository into a PVC of this namespace.',
  {
    targetPVC: obj(
      'The PVC to create and fill (or fill, if it exists and is not bound yet); it becomes usable only once its data is complete.',
      {
        name: objectName('Name of the PVC, in this namespace.'),
        storageClassName: objectName("StorageClass of the new volume (default: the cluster's default class)."),
        size: str('Size of the new volume (default: the size of the backed-up volume).', { pattern: quantity }),
        accessModes: arr(
          'Access modes of the new volume (default ReadWriteOnce).',
          str('An access mode.', { enum: ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] }),
          { listType: 'set', minItems: 1 },
        ),
        zeroedVolume: bool(
          "Set to true when the storage class gives new volumes that read as zeros (it discards or zeroes them when provisioning): a block restore then skips the backup's all-zero ranges. Default false: they are written, since a volume may hold another tenant's old data.",
          { default: false },
        ),
        awaitClaim: bool(
          'Set to true when someone else (Velero) creates the PVC after this DataDownload: ferry waits for it (within operationTimeout), restores into a volume of its size, class, access modes and volume mode, and binds the two; it never creates the PVC itself.',
          { default: false },
        ),
      },
      { required: ['name'] },
    ),
    backupStorageLocation: objectName(
      "BackupStorageLocation (in ferry's namespace) holding the repository; it must allow this namespace.",
    ),
    source: obj(
      'The data to restore: a repository snapshot ID or a DataUpload.',
      {
        snapshotID: str('Repository snapshot to restore.', { pattern: snapshotIDPattern }),
        dataUpload: obj(
          'DataUpload whose snapshot to restore.',
          {
            name: objectName('Name of the DataUpload.'),
            namespace: namespaceName('Namespace of the DataUpload (default: this namespace).'),
          },
          { required: ['name'] },
        ),
      },
      { exactlyOneOf: ['snapshotID', 'dataUpload'] },
    ),
    sourceNamespace: namespaceName(
      "Namespace whose repository holds the snapshot (default: this namespace); another namespace needs the location's crossNamespaceRestores to allow it.",
    ),
    dataMover: dataMover,
    operationTimeout,
    cancel,
  },
  { required: ['targetPVC', 'backupStorageLocation', 'source'] },
);

export const dataDownloadStatus = obj('Progress and results of the restore, written by ferry.', {
  ...commonStatus,
  snapshotID: str('Full ID of the repository snapshot being restored.', { pattern: fullID }),
});
