// A schedule in namespace app due at 2025-03-01T10:00Z, the run context of its CronJob's pod at that minute (each
// sleep calls `onSleep`, standing in for the steps that move backups on), and a namespace with PVCs data, late
// (selected by backup=yes) and unrelated.
import type { BackupSchedule } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { createLogger } from '../../../src/shared/kube/logger.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { ScheduleContext } from '../../../src/steps/schedule/context.ts';
import { claim } from '../dispatcher/world.ts';

export const due = Date.parse('2025-03-01T10:00:00Z');

export function schedule(
  spec: Partial<BackupSchedule['spec']> = {},
  status?: BackupSchedule['status'],
): BackupSchedule & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: 'nightly', namespace: 'app', uid: 'abcdef01-2345-4000-8000-000000000000', generation: 1 },
    spec: {
      schedule: '*/5 * * * *',
      pvcs: ['data'],
      selector: { matchLabels: { backup: 'yes' } },
      backupStorageLocation: 'default',
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

export function context(
  kube: MemoryKube,
  command: ScheduleContext['command'],
  onSleep: () => void = () => undefined,
): ScheduleContext {
  return {
    command,
    kube,
    log: createLogger({}, { write: () => undefined }),
    ferryNamespace: 'ferry-system',
    podName: 'pod',
    jobName: `ferry-schedule-nightly-${due / 60_000}`,
    pollMs: 10,
    signal: new AbortController().signal,
    now: () => new Date(due + 2000),
    sleep: async () => onSleep(),
  };
}

export function seeded(...extra: KubeObject[]): MemoryKube {
  const kube = new MemoryKube();
  const late = claim('app', 'late');
  late.metadata.labels = { backup: 'yes' };
  kube.seed(claim('app', 'data'), late, claim('app', 'unrelated'), ...extra);
  return kube;
}
