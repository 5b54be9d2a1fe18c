// A small cluster for the app-restore step: a location, an AppBackup of two volumes (data, wal) with their
// Completed DataUploads in namespace app, and a context whose sleep plays the DataDownload steps (each sleep moves
// every unfinished DataDownload on as `transfer` says).
import type { AppBackup, AppRestore } from '../../../src/shared/api/app.ts';
import type { DataDownload, Phase } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { createLogger } from '../../../src/shared/kube/logger.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { RestoreContext } from '../../../src/steps/app/restore-context.ts';
import { ferryNamespace, location } from '../steps/harness.ts';

export const restoreUID = '7e57a11e-0000-4000-8000-000000000001';

export function appBackup(
  volumes: { pvc: string; phase: Phase }[] = [
    { pvc: 'data', phase: 'Completed' },
    { pvc: 'wal', phase: 'Completed' },
  ],
  phase: NonNullable<AppBackup['status']>['phase'] = 'Completed',
  namespace = 'app',
): AppBackup & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppBackup',
    metadata: { name: 'db', namespace, uid: 'ab000000-0000-4000-8000-000000000001' },
    spec: { pvcs: volumes.map((v) => v.pvc), backupStorageLocation: 'default' },
    status: {
      phase,
      volumes: volumes.map((v) => ({ pvc: v.pvc, dataUpload: `db-${v.pvc}`.slice(0, 253), phase: v.phase })),
    },
  };
}

/** The AppBackup's DataUploads, in the phases its status names. */
export function uploadsOf(backup: AppBackup & KubeObject): KubeObject[] {
  return (backup.status?.volumes ?? []).map((v) => ({
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name: v.dataUpload!, namespace: backup.metadata.namespace },
    spec: { sourcePVC: v.pvc, backupStorageLocation: 'default' },
    status: { phase: v.phase, snapshotID: 'ab'.repeat(32) },
  }));
}

export function appRestore(spec: Partial<AppRestore['spec']> = {}, namespace = 'app'): AppRestore & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppRestore',
    metadata: { name: 'back', namespace, uid: restoreUID },
    spec: { appBackup: { name: 'db' }, ...spec },
  };
}

/** The location serves app and restore; crossNamespaceRestores as given. */
export function world(
  backup = appBackup(),
  cross: { from: string; to: string[] }[] = [],
  ...extra: KubeObject[]
): MemoryKube {
  const kube = new MemoryKube();
  const [bsl, ...secrets] = location(['app', 'restore']);
  (bsl.spec as Record<string, unknown>).crossNamespaceRestores = cross;
  kube.seed(bsl, ...secrets, backup, ...uploadsOf(backup), ...extra);
  return kube;
}

/** Each sleep: every unfinished DataDownload takes the next phase `transfer(pvc target)` gives, with progress. */
export function context(
  kube: MemoryKube,
  transfer: (dd: DataDownload & KubeObject) => Phase | undefined = () => 'Completed',
  onSleep: () => void = () => undefined,
): RestoreContext & { sleeps: number } {
  const ctx = {
    sleeps: 0,
    kube,
    log: createLogger({}, { write: () => undefined }),
    ferryNamespace,
    podName: 'ferry-app-restore-pod',
    pollMs: 10,
    signal: new AbortController().signal,
    now: () => new Date('2026-03-01T12:00:00Z'),
    sleep: async () => {
      ctx.sleeps++;
      if (ctx.sleeps > 50) throw new Error('the step never ended');
      onSleep();
      for (const dd of kube.all('DataDownload') as (DataDownload & KubeObject)[]) {
        if (['Completed', 'Failed', 'Canceled'].includes(dd.status?.phase ?? 'New')) continue;
        const phase = dd.spec.cancel ? 'Canceled' : transfer(dd);
        if (!phase) continue;
        kube.mutate({ kind: 'DataDownload', namespace: dd.metadata.namespace, name: dd.metadata.name }, (o) => {
          o.status = {
            phase,
            progress: { bytesDone: 1000, totalBytes: 1000 },
            ...(phase === 'Failed' ? { message: 'the transfer broke' } : {}),
          };
        });
      }
    },
  };
  return ctx;
}

export function restoreOf(kube: MemoryKube, namespace = 'app'): AppRestore & KubeObject {
  return kube.peek<AppRestore & KubeObject>({ kind: 'AppRestore', namespace, name: 'back' })!;
}

export function downloads(kube: MemoryKube): (DataDownload & KubeObject)[] {
  return (kube.all('DataDownload') as (DataDownload & KubeObject)[]).sort((a, b) =>
    a.metadata.name.localeCompare(b.metadata.name),
  );
}
