// An in-memory cluster for the app-backup step: a namespace with two Bound CSI claims (data, wal), a storage
// location open to it, snapshot classes, reactors playing the snapshot controller (a group snapshot cuts one member
// VolumeSnapshot per labeled claim; a VolumeSnapshot is cut on creation), a fake hook runner, and a clock that moves
// by each sleep. Everything that happens lands in one journal, so a test reads the order of hooks and snapshots.
import type { AppBackup, Hook, HookRun, HookStage } from '../../../src/shared/api/app.ts';
import { groupMemberLabel } from '../../../src/shared/app/names.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { createLogger } from '../../../src/shared/kube/logger.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { AppBackupContext, AppBackupObject, HookRunner } from '../../../src/steps/app/context.ts';

export const ns = 'app';
export const uid = 'ab000001-0000-4000-8000-000000000000';
export const driver = 'hostpath.csi.k8s.io';

export function pvc(name: string, namespace = ns, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace, ...extra },
    spec: { volumeName: `pv-${namespace}-${name}`.slice(0, 253) },
    status: { phase: 'Bound' },
  };
}

export function pv(claim: KubeObject, csiDriver: string | undefined = driver): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: (claim.spec as { volumeName: string }).volumeName },
    spec: csiDriver ? { csi: { driver: csiDriver, volumeHandle: 'h' } } : { hostPath: { path: '/x' } },
  };
}

export const hook = (name: string, extra: Partial<Hook> = {}): Hook => ({
  name,
  selector: { matchLabels: { app: 'db' } },
  command: ['sh', '-c', name],
  ...extra,
});

export function appBackup(spec: Partial<AppBackup['spec']> = {}, status?: AppBackup['status']): AppBackupObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppBackup',
    metadata: { name: 'db', namespace: ns, uid },
    spec: {
      pvcs: ['data', 'wal'],
      backupStorageLocation: 'default',
      hooks: { pre: [hook('freeze')], post: [hook('thaw')] },
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

const location: KubeObject = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'BackupStorageLocation',
  metadata: { name: 'default', namespace: 'ferry-system' },
  spec: { allowedNamespaces: [ns] },
};

export const groupClass: KubeObject & { driver: string } = {
  apiVersion: 'groupsnapshot.storage.k8s.io/v1',
  kind: 'VolumeGroupSnapshotClass',
  metadata: { name: 'group', annotations: { 'groupsnapshot.storage.kubernetes.io/is-default-class': 'true' } },
  driver,
};

const volumeClass: KubeObject & { driver: string } = {
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotClass',
  metadata: { name: 'single', annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } },
  driver,
};

export interface World {
  kube: MemoryKube;
  journal: string[];
  ctx: AppBackupContext;
  /** what each hook stage answers; default every hook Succeeded */
  hookAnswer: (stage: HookStage, hooks: Hook[], signal?: AbortSignal) => Promise<{ runs: HookRun[]; failure?: string }>;
  /** called at every sleep of the step (the clock has moved by then) */
  onSleep: () => void;
  /** a group snapshot or VolumeSnapshot the reactors leave unready */
  snapshotsHang: boolean;
}

export function runsOf(stage: HookStage, hooks: Hook[], outcome: HookRun['outcome'] = 'Succeeded'): HookRun[] {
  return hooks.map((h) => ({
    stage,
    hook: h.name,
    pod: 'db-0',
    container: 'db',
    outcome,
    ...(outcome === 'Failed' ? { exitCode: 3, output: `${h.name}: disk busy` } : { exitCode: 0 }),
    startTime: '2025-03-01T10:00:00Z',
    endTime: '2025-03-01T10:00:01Z',
  }));
}

export function world(opts: { group?: boolean; objects?: KubeObject[]; ab?: AppBackupObject } = {}): World {
  const kube = new MemoryKube();
  const journal: string[] = [];
  const claims = [pvc('data'), pvc('wal')];
  kube.seed(location, volumeClass, ...claims, ...claims.map((c) => pv(c)), ...(opts.objects ?? []));
  if (opts.group !== false) kube.seed(groupClass);
  if (opts.ab) kube.seed(opts.ab);
  let clock = Date.parse('2025-03-01T10:00:00Z');
  const w: World = {
    kube,
    journal,
    hookAnswer: async (stage, hooks) => ({ runs: runsOf(stage, hooks) }),
    onSleep: () => undefined,
    snapshotsHang: false,
    ctx: undefined as unknown as AppBackupContext,
  };
  const runHooks: HookRunner = async (c, stage, hooks) => {
    journal.push(`${stage}:${hooks.map((h) => h.name).join(',')}`);
    return w.hookAnswer(stage, hooks, c.signal);
  };
  kube.on('create', 'VolumeGroupSnapshot', (vgs, k) => {
    const selector = (vgs.spec as { source: { selector: { matchLabels: Record<string, string> } } }).source.selector;
    const [key] = Object.keys(selector.matchLabels);
    const members = k
      .all('PersistentVolumeClaim')
      .filter((c) => c.metadata.namespace === vgs.metadata.namespace && c.metadata.labels?.[key] === 'true');
    journal.push(`group-snapshot:${members.map((c) => c.metadata.name).join(',')}`);
    if (w.snapshotsHang) return;
    for (const c of members)
      k.seed({
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: {
          name: `snapshot-${c.metadata.name.slice(0, 200)}-member`,
          namespace: vgs.metadata.namespace,
          ownerReferences: [
            {
              apiVersion: vgs.apiVersion,
              kind: 'VolumeGroupSnapshot',
              name: vgs.metadata.name,
              uid: vgs.metadata.uid!,
            },
          ],
        },
        spec: { source: { persistentVolumeClaimName: c.metadata.name } },
        status: { readyToUse: true, creationTime: '2025-03-01T10:00:05Z' },
      });
    k.mutate({ kind: 'VolumeGroupSnapshot', namespace: vgs.metadata.namespace, name: vgs.metadata.name }, (o) => {
      o.status = { readyToUse: true, creationTime: '2025-03-01T10:00:05Z' };
    });
  });
  kube.on('create', 'VolumeSnapshot', (vs, k) => {
    journal.push(
      `snapshot:${(vs.spec as { source: { persistentVolumeClaimName: string } }).source.persistentVolumeClaimName}`,
    );
    if (w.snapshotsHang) return;
    k.mutate({ kind: 'VolumeSnapshot', namespace: vs.metadata.namespace, name: vs.metadata.name }, (o) => {
      o.status = { readyToUse: false, creationTime: '2025-03-01T10:00:06Z' };
    });
  });
  w.ctx = {
    kube,
    log: createLogger({}, { write: () => undefined }),
    ferryNamespace: 'ferry-system',
    podName: 'pod',
    pollMs: 1000,
    signal: new AbortController().signal,
    now: () => new Date(clock),
    sleep: async (ms, signal) => {
      clock += ms;
      await new Promise((r) => setImmediate(r));
      signal?.throwIfAborted();
      w.onSleep();
    },
    runHooks,
    exec: { exec: async () => ({ timedOut: false, output: '' }) },
  };
  return w;
}

export const ref = { namespace: ns, name: 'db' };

export function current(w: World): AppBackupObject {
  return w.kube.peek<AppBackupObject>({ kind: 'AppBackup', namespace: ns, name: 'db' })!;
}

export function uploads(w: World): KubeObject[] {
  return w.kube.all('DataUpload');
}

/** Every DataUpload not yet at an end reaches `phase` (per PVC, default Completed), as their steps would take it. */
export function settleUploads(w: World, phases: Record<string, string> = {}): void {
  for (const du of uploads(w)) {
    const spec = du.spec as { sourcePVC: string };
    const status = du.status as { phase?: string } | undefined;
    if (['Completed', 'Failed', 'Canceled'].includes(status?.phase ?? '')) continue;
    const phase = phases[spec.sourcePVC] ?? 'Completed';
    w.kube.mutate({ kind: 'DataUpload', namespace: ns, name: du.metadata.name }, (o) => {
      o.status = {
        phase,
        progress: { bytesDone: 100, totalBytes: 100 },
        ...(phase === 'Completed' ? { snapshotID: `id-${spec.sourcePVC}` } : { message: `${spec.sourcePVC} broke` }),
      };
    });
  }
}
