// The BackupSchedule the unit tests start from: "nightly" in namespace app, backing up PVC data to location default.
import type { BackupSchedule } from '../../src/shared/api/types.ts';
import type { KubeObject } from '../../src/shared/kube/kube.ts';

export function nightlySchedule(
  spec: Partial<BackupSchedule['spec']> = {},
  meta: Partial<BackupSchedule['metadata']> = {},
): BackupSchedule & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: {
      name: 'nightly',
      namespace: 'app',
      uid: 'abcdef01-2345-4000-8000-000000000000',
      generation: 1,
      ...meta,
    },
    spec: { schedule: '*/5 * * * *', pvcs: ['data'], backupStorageLocation: 'default', ...spec },
  };
}
