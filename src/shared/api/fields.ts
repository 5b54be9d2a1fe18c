// ferry's API (ferry.dev/v1alpha1) described once: every field, what it allows and what it means. The CRDs in
// deploy/crds/ (through ./openapi.ts and ./crds.ts) and the dispatcher's valibot schemas (./schemas.ts) are both
// made from these descriptions, so the cluster and the dispatcher cannot disagree about what is valid.
// The shapes are those of ./types.ts, ./app.ts and ./copy.ts; a test checks that typed fixtures pass these descriptions.
import type { ObjectField } from './field.ts';
import { backupStorageLocationSpec, backupStorageLocationStatus } from './fields/location.ts';
import { dataDownloadSpec, dataDownloadStatus, dataUploadSpec, dataUploadStatus } from './fields/transfer.ts';
import { backupScheduleSpec, backupScheduleStatus } from './fields/schedule.ts';
import { appBackupSpec, appBackupStatus, appRestoreSpec, appRestoreStatus } from './fields/app.ts';
import { copyPolicySpec, copyPolicyStatus, dataCopySpec, dataCopyStatus } from './fields/copy.ts';

export interface KindFields {
  spec: ObjectField;
  status: ObjectField;
}

export const fieldsOf = {
  BackupStorageLocation: { spec: backupStorageLocationSpec, status: backupStorageLocationStatus },
  DataUpload: { spec: dataUploadSpec, status: dataUploadStatus },
  DataDownload: { spec: dataDownloadSpec, status: dataDownloadStatus },
  BackupSchedule: { spec: backupScheduleSpec, status: backupScheduleStatus },
  AppBackup: { spec: appBackupSpec, status: appBackupStatus },
  AppRestore: { spec: appRestoreSpec, status: appRestoreStatus },
  DataCopy: { spec: dataCopySpec, status: dataCopyStatus },
  CopyPolicy: { spec: copyPolicySpec, status: copyPolicyStatus },
} satisfies Record<string, KindFields>;

export type DescribedKind = keyof typeof fieldsOf;
