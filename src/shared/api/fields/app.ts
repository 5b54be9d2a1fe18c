// AppBackup and AppRestore (the shapes of ../app.ts): the volumes of one application snapshotted at one instant
// between pre and post hooks, uploaded as one DataUpload per volume, and brought back into a namespace.
import { arr, bool, int, map, obj, str } from '../field.ts';
import type { ArrayField, StringField } from '../field.ts';
import type { AppBackupPhase } from '../app.ts';
import {
  cancel,
  conditions,
  dnsLabel,
  goDuration,
  namespaceName,
  objectName,
  phases,
  snapshotIDPattern,
  tags,
  timestamp,
} from './common.ts';
import { labelSelector } from './selector.ts';

/** A backup names up to this many PVCs; with a selector it may hold more volumes, up to maxVolumes. */
export const maxNamedPVCs = 256;
export const maxVolumes = 512;
export const maxHooks = 32;
export const maxCommandArgs = 64;
/** The end of a hook's output kept in status: 4 KiB of bytes is at most this many characters. */
export const maxHookOutput = 4096;
/** Hook runs kept in status: every hook of both lists in every pod it matched (32 + 32 hooks in 16 pods). */
export const maxHookRuns = 1024;

const labelName = (description: string): StringField => str(description, { pattern: dnsLabel, maxLength: 63 });

const volumesDone = str('Volumes finished of all, as "done/total", for the Volumes column.', {
  maxLength: 16,
  pattern: { regex: '^[0-9]+/[0-9]+$', allowed: 'two counts as "done/total", e.g. 2/3' },
});

const timeout = (description: string, fallback: string): StringField =>
  str(description, { pattern: goDuration, default: fallback });

const hook = obj(
  'A command run in a container of every Running pod the selector picks in this namespace, one pod after the other (by name).',
  {
    name: labelName('Names the hook in status and Events; unique within its list.'),
    selector: labelSelector(
      "Pods of this namespace with these labels (Kubernetes' label selector); the hook runs in each Running one, and fails when none matches.",
      'pod',
    ),
    container: labelName("Container of the pod to run the command in (default: the pod's first container)."),
    command: arr(
      'The command and its arguments, run directly (not through a shell; use ["sh", "-c", "..."] for one). Exit code 0 is success.',
      str('One argument.', { maxLength: 4096 }),
      { minItems: 1, maxItems: maxCommandArgs },
    ),
    timeout: timeout('The command is killed after this long and counts as failed, e.g. 30s or 2m.', '30s'),
    onError: str(
      'What a failure means. Fail: a failed pre hook stops the backup before any snapshot (post hooks still run) and a failed post hook makes it PartiallyFailed at best; Continue: recorded in status and an Event, and the backup goes on.',
      { enum: ['Fail', 'Continue'], default: 'Fail' },
    ),
  },
  { required: ['name', 'selector', 'command'] },
);

const hookList = (description: string): ArrayField =>
  arr(description, hook, { listType: 'map', mapKeys: ['name'], maxItems: maxHooks });

export const appBackupHooks = obj(
  'Commands that quiesce the application around the snapshots. Post hooks always run once a pre hook has started, also when a snapshot fails or the backup is canceled, so the application is never left frozen. ferry runs them through the apiserver (pods/exec) with its app-backup step account.',
  {
    pre: hookList('Run in order before the snapshots; the snapshots are taken right after the last one.'),
    post: hookList('Run in order after the snapshots (every one of them, whatever fails).'),
  },
);

const freeze = bool(
  'Set to true to freeze the file system of each backed-up PVC while its snapshot is cut: after the pre hooks, ferry runs `fsfreeze --freeze <mountPath>` in every Running pod of this namespace that mounts the PVC (once per pod and PVC, in the first container mounting it), and `fsfreeze --unfreeze <mountPath>` as soon as the snapshots are cut (also when they fail, on cancel, and first thing after a crash), before the post hooks; each run is in status.hooks as hook "fsfreeze". That container needs the fsfreeze command (util-linux) and CAP_SYS_ADMIN (privileged: true, or securityContext.capabilities.add: [SYS_ADMIN]). A failed freeze fails the backup before any snapshot. Block volumes (volumeDevices) are not frozen. Default: false.',
);

const groupSnapshotClass = objectName(
  "VolumeGroupSnapshotClass for one snapshot of all volumes at one instant (default: the class of the volumes' CSI driver annotated groupsnapshot.storage.kubernetes.io/is-default-class).",
);
const snapshotClass = objectName(
  "VolumeSnapshotClass of the per-volume snapshots, taken when the driver has no group snapshots (default: the driver's default class).",
);

export const appBackupSpec = obj(
  "Back up the volumes of an application in this namespace at one instant: pre hooks, one VolumeGroupSnapshot of all its PVCs (or a snapshot of each, back to back, when their CSI driver has no group snapshots), post hooks, then one DataUpload per volume moving the data into the location's repository.",
  {
    pvcs: arr(
      'Names of PVCs of this namespace to back up; with selector, both sets are backed up. Each must exist and be bound.',
      objectName('A PVC name.'),
      { listType: 'set', maxItems: maxNamedPVCs },
    ),
    selector: labelSelector(
      "PVCs of this namespace with these labels when the backup starts (Kubernetes' label selector).",
      'PVC',
    ),
    backupStorageLocation: objectName(
      "BackupStorageLocation (in ferry's namespace) to store the data in; it must allow this namespace.",
    ),
    hooks: appBackupHooks,
    freeze,
    volumeGroupSnapshotClassName: groupSnapshotClass,
    volumeSnapshotClassName: snapshotClass,
    operationTimeout: timeout(
      "How long to wait for the snapshots to be ready, and each DataUpload's operationTimeout.",
      '10m',
    ),
    cancel,
    expire: str(
      'Delete this AppBackup (and with it its DataUploads and their repository data) this long after its creation, e.g. 720h. Default: never.',
      { pattern: goDuration },
    ),
    tags: tags(
      "Tags recorded on each volume's repository snapshot, as key=value; ferry adds app-backup=<this name>.",
      31,
    ),
  },
  { required: ['backupStorageLocation'] },
);

const volumePhase = str("Phase of the volume's DataUpload or DataDownload when last seen.", { enum: phases });
const bytesDone = int('Bytes moved so far.', { minimum: 0 });
const totalBytes = int('Bytes to move in all, as far as known.', { minimum: 0 });
const message = str('Human-readable summary of the last transition or failure.', { maxLength: 32768 });

const hookRun = obj(
  'One hook in one pod.',
  {
    stage: str('Before (pre) or after (post) the snapshots.', { enum: ['pre', 'post'] }),
    hook: labelName('The hook.'),
    pod: objectName('The pod it ran in.'),
    container: labelName('The container it ran in.'),
    outcome: str('How it ended; TimedOut: killed at its timeout.', { enum: ['Succeeded', 'Failed', 'TimedOut'] }),
    exitCode: int("The command's exit code, when it exited.", { minimum: 0, maximum: 255 }),
    output: str('The end of its standard output and error (at most 4 KiB).', { maxLength: maxHookOutput }),
    startTime: timestamp('When it started.'),
    endTime: timestamp('When it ended.'),
  },
  { required: ['stage', 'hook', 'pod', 'container', 'outcome', 'startTime', 'endTime'] },
);

const frozenMount = obj(
  "A PVC's file system as one pod's container mounts it.",
  {
    pod: objectName('The pod.'),
    container: labelName('The container fsfreeze runs in.'),
    pvc: objectName('The PVC.'),
    mountPath: str('Where the container mounts it.', { maxLength: 4096 }),
  },
  { required: ['pod', 'container', 'pvc', 'mountPath'] },
);

const backupVolume = obj(
  'One volume of the backup.',
  {
    pvc: objectName('The PVC.'),
    volumeSnapshot: objectName('Its VolumeSnapshot: a member of the group snapshot, or its own.'),
    dataUpload: objectName('The DataUpload moving its data (in this namespace).'),
    phase: volumePhase,
    bytesDone,
    totalBytes,
    snapshotID: str('The repository snapshot of this volume, once Completed.', { pattern: snapshotIDPattern }),
    message,
  },
  { required: ['pvc'] },
);

export const appBackupPhases = [
  'New',
  'FailedValidation',
  'InProgress',
  'Uploading',
  'UploadingPartialFailure',
  'Completed',
  'PartiallyFailed',
  'Failed',
  'Canceled',
] as const satisfies readonly AppBackupPhase[];

export const appBackupStatus = obj('Progress and results of the application backup, written by ferry.', {
  phase: str(
    'New -> InProgress (hooks and snapshots) -> Uploading (DataUploads moving the data; UploadingPartialFailure once one failed) -> Completed, PartiallyFailed (some volumes restorable) or Failed. FailedValidation: unusable as written (a PVC missing or unbound); Canceled: spec.cancel or a deletion stopped it.',
    { enum: appBackupPhases },
  ),
  message,
  consistency: str(
    'Group: one VolumeGroupSnapshot, all volumes at one instant; PerVolume: each volume its own snapshot, taken back to back between the same hooks (consistent per volume only).',
    { enum: ['Group', 'PerVolume'] },
  ),
  volumeGroupSnapshot: objectName('The VolumeGroupSnapshot taken (in this namespace), until the backup ends.'),
  snapshotTime: timestamp('When the snapshots were cut.'),
  hooksStarted: bool(
    'A pre hook (or the freeze of spec.freeze) has started: post hooks are owed, also by a step that resumes after a crash.',
  ),
  hooks: arr('Every hook run, in order.', hookRun, { maxItems: maxHookRuns }),
  frozen: arr(
    'File systems spec.freeze froze (or started to freeze), written before each freeze and cleared once they are thawed; a step that resumes after a crash thaws these first.',
    frozenMount,
    { maxItems: maxHookRuns },
  ),
  volumes: arr('Each volume, by PVC name.', backupVolume, { listType: 'map', mapKeys: ['pvc'], maxItems: maxVolumes }),
  volumesDone,
  bytesDone: int('Bytes moved so far, all volumes together.', { minimum: 0 }),
  totalBytes: int('Bytes to move, all volumes together, as far as known.', { minimum: 0 }),
  startTimestamp: timestamp('When the backup started.'),
  completionTimestamp: timestamp('When it reached a final phase.'),
  conditions,
});

export const appRestoreSpec = obj(
  'Restore the volumes of an AppBackup into this namespace, one DataDownload per volume; complete only when every volume is.',
  {
    appBackup: obj(
      'The AppBackup to restore; it must be Completed or PartiallyFailed.',
      {
        name: objectName('Its name.'),
        namespace: namespaceName(
          "Its namespace, when not this one (a cross-namespace restore, which the backup's location must allow in spec.crossNamespaceRestores).",
        ),
      },
      { required: ['name'] },
    ),
    volumes: arr(
      "Source PVC names to restore; each must be a Completed volume of the backup. Default: all of the backup's Completed volumes.",
      objectName('A source PVC name.'),
      { listType: 'set', maxItems: maxVolumes },
    ),
    pvcNames: map(
      "The restored PVC's name for a source PVC (source name: new name), when not the source's own name; no two volumes may share a target.",
      objectName('The restored PVC name.'),
      { maxProperties: maxVolumes },
    ),
    storageClassName: objectName("StorageClass of the restored PVCs (default: each source PVC's)."),
    operationTimeout: timeout("Each DataDownload's operationTimeout.", '10m'),
    cancel: bool(
      'Set to true to cancel: every DataDownload is canceled and the restore ends Failed ("canceled"). Cannot be unset.',
      { default: false },
    ),
  },
  { required: ['appBackup'] },
);

const restoreVolume = obj(
  'One volume of the restore.',
  {
    pvc: objectName('The source PVC in the backup.'),
    targetPVC: objectName('The PVC restored into, in this namespace.'),
    dataDownload: objectName('The DataDownload moving its data (in this namespace).'),
    phase: volumePhase,
    bytesDone,
    totalBytes,
    message,
  },
  { required: ['pvc', 'targetPVC'] },
);

export const appRestoreStatus = obj('Progress and results of the restore, written by ferry.', {
  phase: str(
    'New -> InProgress -> Completed (every volume), PartiallyFailed (some) or Failed (none, or canceled). FailedValidation: the backup or a volume cannot be restored as asked.',
    { enum: ['New', 'FailedValidation', 'InProgress', 'Completed', 'PartiallyFailed', 'Failed'] },
  ),
  message,
  volumes: arr('Each volume, by source PVC name.', restoreVolume, {
    listType: 'map',
    mapKeys: ['pvc'],
    maxItems: maxVolumes,
  }),
  volumesDone,
  startTimestamp: timestamp('When the restore started.'),
  completionTimestamp: timestamp('When it reached a final phase.'),
  conditions,
});

export const scheduledAppBackup = obj(
  'Set: each run creates ONE AppBackup of all the PVCs (pre and post hooks, one instant) instead of one DataUpload per PVC; expiry and retention then count AppBackups.',
  {
    hooks: appBackupHooks,
    freeze,
    volumeGroupSnapshotClassName: groupSnapshotClass,
    volumeSnapshotClassName: snapshotClass,
  },
);
