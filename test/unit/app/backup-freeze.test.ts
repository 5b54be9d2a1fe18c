// spec.freeze on the app-backup step: fsfreeze of the backed-up claims' file system mounts in the namespace's Running
// pods, after the pre hooks and only until the snapshots are cut, then the thaw before the post hooks; a failed
// freeze takes no snapshot; cancel and a crash between freeze and thaw still thaw.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AppBackup } from '../../../src/shared/api/app.ts';
import type { ExecRequest, ExecResult } from '../../../src/shared/hooks/exec.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { interruptedMessage, runAppBackup } from '../../../src/steps/app/backup.ts';
import { appBackup, current, ns, pv, pvc, ref, settleUploads, world, type World } from './backup-world.ts';

interface Container {
  name: string;
  /** volume name: mount path */
  mounts?: Record<string, string>;
  /** volume name: device path (a block volume) */
  devices?: Record<string, string>;
}

function pod(
  name: string,
  claims: Record<string, string>,
  containers: Container[],
  opts: { namespace?: string; phase?: string } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: opts.namespace ?? ns },
    spec: {
      volumes: Object.entries(claims).map(([volume, claimName]) => ({
        name: volume,
        persistentVolumeClaim: { claimName },
      })),
      containers: containers.map((c) => ({
        name: c.name,
        volumeMounts: Object.entries(c.mounts ?? {}).map(([n, mountPath]) => ({ name: n, mountPath })),
        volumeDevices: Object.entries(c.devices ?? {}).map(([n, devicePath]) => ({ name: n, devicePath })),
      })),
    },
    status: { phase: opts.phase ?? 'Running' },
  };
}

const other = pvc('other');

/** Pods around the claims data and wal (backed up) and other (not). */
const pods: KubeObject[] = [
  // wal is first mounted by the sidecar: frozen there, once; other is never frozen
  pod('db-0', { d: 'data', w: 'wal', o: 'other' }, [
    { name: 'sidecar', mounts: { w: '/wal-ro' } },
    { name: 'db', mounts: { d: '/var/lib/db', w: '/var/lib/wal', o: '/other' } },
  ]),
  // a block volume has no file system to freeze
  pod('db-1', { d: 'data' }, [{ name: 'db', devices: { d: '/dev/xvda' } }]),
  // one claim under two volume names and two containers: one freeze
  pod('db-2', { a: 'data', b: 'data' }, [
    { name: 'one', mounts: { a: '/a' } },
    { name: 'two', mounts: { b: '/b' } },
  ]),
  pod('db-3', { d: 'data' }, [{ name: 'db', mounts: { d: '/pending' } }], { phase: 'Pending' }),
];

const frozenMounts = ['db-0/db /var/lib/db', 'db-0/sidecar /wal-ro', 'db-2/one /a'];

/** The fake exec journals `exec:<pod>/<container> <flag> <path>`; `answer` may fail one. */
function freezeWorld(
  opts: { group?: boolean; ab?: AppBackup['spec']; objects?: KubeObject[] } = {},
  answer: (req: ExecRequest) => ExecResult | undefined = () => undefined,
): World & { execs: ExecRequest[] } {
  const w = world({
    ...(opts.group === false ? { group: false } : {}),
    objects: [other, pv(other), ...pods, ...(opts.objects ?? [])],
    ab: appBackup({ freeze: true, ...opts.ab }),
  });
  const execs: ExecRequest[] = [];
  w.ctx.exec = {
    exec: async (req) => {
      execs.push(req);
      w.journal.push(`exec:${req.pod}/${req.container} ${req.command.slice(1).join(' ')}`);
      return answer(req) ?? { exitCode: 0, timedOut: false, output: '' };
    },
  };
  return Object.assign(w, { execs });
}

const freezes = (flag: string): string[] => frozenMounts.map((m) => `exec:${m.replace(' ', ` ${flag} `)}`);

/** A backup run to its end where fsfreeze `flag` of db-2's mount /a fails (exit code 1) with `error`. */
async function ranWithDb2Failing(flag: string, error: string): Promise<World> {
  const w = freezeWorld({}, (req) =>
    req.pod === 'db-2' && req.command[1] === flag
      ? { exitCode: 1, timedOut: false, output: `fsfreeze: /a: ${flag.slice(2)} failed: ${error}\n` }
      : undefined,
  );
  w.onSleep = () => settleUploads(w);
  await runAppBackup(w.ctx, ref);
  return w;
}

describe('app-backup spec.freeze', () => {
  for (const group of [true, false])
    it(`freezes each backed-up file system mount after the pre hooks, thaws right after the ${group ? 'group snapshot' : 'per-volume snapshots'}, before the post hooks`, async () => {
      const w = freezeWorld({ group });
      w.onSleep = () => settleUploads(w);
      const out = await runAppBackup(w.ctx, ref);
      assert.equal(out.outcome, 'Advanced', out.reason);
      const cut = group ? ['group-snapshot:data,wal'] : ['snapshot:data', 'snapshot:wal'];
      assert.deepEqual(w.journal, [
        'pre:freeze',
        ...freezes('--freeze'),
        ...cut,
        ...freezes('--unfreeze'),
        'post:thaw',
      ]);
      assert.ok(
        w.execs.every((e) => e.namespace === ns && e.command[0] === 'fsfreeze'),
        'fsfreeze, in the namespace',
      );
      const ab = current(w);
      assert.equal(ab.status?.phase, 'Completed');
      assert.equal(ab.status?.frozen, undefined, 'nothing left frozen');
      const runs = (ab.status?.hooks ?? []).filter((r) => r.hook === 'fsfreeze');
      assert.deepEqual(
        runs.map((r) => [r.stage, r.pod, r.container, r.outcome]),
        [
          ['pre', 'db-0', 'db', 'Succeeded'],
          ['pre', 'db-0', 'sidecar', 'Succeeded'],
          ['pre', 'db-2', 'one', 'Succeeded'],
          ['post', 'db-0', 'db', 'Succeeded'],
          ['post', 'db-0', 'sidecar', 'Succeeded'],
          ['post', 'db-2', 'one', 'Succeeded'],
        ],
      );
      assert.match(runs[0].output ?? '', /fsfreeze --freeze \/var\/lib\/db \(PVC data\)/);
      assert.match(runs[4].output ?? '', /fsfreeze --unfreeze \/wal-ro \(PVC wal\)/);
    });

  it('thaws once the group snapshot has its creationTime, not after it is ready to use', async () => {
    const w = freezeWorld({ ab: { operationTimeout: '20s' } as AppBackup['spec'] });
    w.snapshotsHang = true;
    let readyAtThaw: unknown = 'no thaw';
    w.onSleep = () => {
      for (const g of w.kube.all('VolumeGroupSnapshot'))
        w.kube.mutate({ kind: 'VolumeGroupSnapshot', namespace: ns, name: g.metadata.name }, (o) => {
          o.status = { readyToUse: false, creationTime: '2025-03-01T10:00:05Z' };
        });
    };
    const exec = w.ctx.exec.exec;
    w.ctx.exec = {
      exec: async (req) => {
        if (req.command[1] === '--unfreeze' && readyAtThaw === 'no thaw')
          readyAtThaw = (w.kube.all('VolumeGroupSnapshot')[0]?.status as { readyToUse?: boolean }).readyToUse;
        return exec(req);
      },
    };
    await runAppBackup(w.ctx, ref);
    assert.equal(readyAtThaw, false, 'thawed while the group snapshot was cut but not ready');
    const unfreezeAt = w.journal.indexOf(freezes('--unfreeze')[0]);
    assert.ok(unfreezeAt > w.journal.indexOf('group-snapshot:data,wal'), w.journal.join('\n'));
    assert.equal(current(w).status?.phase, 'Failed', 'never ready within 20s');
  });

  it('a failed freeze takes no snapshot, thaws every mount it froze or tried, runs the post hooks and fails naming it', async () => {
    const w = freezeWorld({}, (req) => {
      if (req.container === 'sidecar' && req.command[1] === '--freeze')
        return { exitCode: 1, timedOut: false, output: 'fsfreeze: /wal-ro: freeze failed: Operation not permitted\n' };
      if (req.container === 'sidecar')
        return { exitCode: 1, timedOut: false, output: 'fsfreeze: /wal-ro: unfreeze failed: Invalid argument\n' };
      return undefined;
    });
    w.onSleep = () => settleUploads(w);
    const out = await runAppBackup(w.ctx, ref);
    assert.equal(out.outcome, 'Failed');
    assert.deepEqual(w.journal, [
      'pre:freeze',
      ...freezes('--freeze').slice(0, 2),
      ...freezes('--unfreeze').slice(0, 2),
      'post:thaw',
    ]);
    assert.equal(w.kube.all('VolumeGroupSnapshot').length + w.kube.all('VolumeSnapshot').length, 0, 'no snapshot');
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Failed');
    for (const part of ['db-0', 'sidecar', '/wal-ro', 'PVC wal', 'Operation not permitted', 'no snapshot'])
      assert.ok(ab.status?.message?.includes(part), `${part} in: ${ab.status?.message}`);
    const thawRuns = (ab.status?.hooks ?? []).filter((r) => r.hook === 'fsfreeze' && r.stage === 'post');
    assert.deepEqual(
      thawRuns.map((r) => r.outcome),
      ['Succeeded', 'Succeeded'],
      'a mount that is not frozen is thawed',
    );
    assert.equal(ab.status?.frozen, undefined);
  });

  it('a file system frozen already by another pod of the node (EBUSY) counts as frozen, and the backup goes on', async () => {
    const w = await ranWithDb2Failing('--freeze', 'Device or resource busy');
    assert.ok(w.journal.includes('group-snapshot:data,wal'), w.journal.join('\n'));
    assert.equal(current(w).status?.phase, 'Completed');
    const run = current(w).status?.hooks?.find((r) => r.hook === 'fsfreeze' && r.pod === 'db-2' && r.stage === 'pre');
    assert.equal(run?.outcome, 'Succeeded');
    assert.match(run?.output ?? '', /it was frozen already/);
  });

  it('a failed thaw is a Warning Event naming the mount and leaves the backup PartiallyFailed at best', async () => {
    const w = await ranWithDb2Failing('--unfreeze', 'Input/output error');
    assert.deepEqual(w.journal.slice(-2), [freezes('--unfreeze')[2], 'post:thaw'], 'every thaw tried, post hooks ran');
    assert.equal(current(w).status?.phase, 'PartiallyFailed');
    const warning = w.kube.all('Event').find((e) => e.reason === 'ThawFailed') as KubeObject & { note?: string };
    assert.match(warning?.note ?? '', /\/a \(PVC data\) in pod db-2.*Input\/output error/);
  });

  it('cancel while the snapshot is awaited thaws, then the post hooks run; Canceled', async () => {
    const w = freezeWorld();
    w.snapshotsHang = true;
    w.onSleep = () =>
      w.kube.mutate({ kind: 'AppBackup', namespace: ns, name: 'db' }, (o) => {
        (o.spec as AppBackup['spec']).cancel = true;
      });
    const out = await runAppBackup(w.ctx, ref);
    assert.equal(out.outcome, 'Canceled', out.reason);
    assert.deepEqual(w.journal, [
      'pre:freeze',
      ...freezes('--freeze'),
      'group-snapshot:data,wal',
      ...freezes('--unfreeze'),
      'post:thaw',
    ]);
    assert.equal(current(w).status?.frozen, undefined);
  });

  it('a crash between freeze and thaw: the rerun thaws first (also the mount whose freeze was running), then post hooks, Failed', async () => {
    const first = freezeWorld();
    let left: KubeObject | undefined;
    first.ctx.exec = {
      exec: async (req) => {
        // the status a crash at this instant leaves: the sidecar's freeze is running
        if (req.container === 'sidecar' && req.command[1] === '--freeze') left ??= structuredClone(current(first));
        return { exitCode: 0, timedOut: false, output: '' };
      },
    };
    first.onSleep = () => settleUploads(first);
    await runAppBackup(first.ctx, ref);
    assert.ok(left, 'the sidecar was frozen');
    const w = freezeWorld({});
    w.kube.mutate({ kind: 'AppBackup', namespace: ns, name: 'db' }, (o) => {
      o.status = (left as KubeObject).status;
    });
    const out = await runAppBackup(w.ctx, ref);
    assert.equal(out.outcome, 'Failed');
    assert.deepEqual(w.journal, [...freezes('--unfreeze').slice(0, 2), 'post:thaw']);
    assert.equal(current(w).status?.message, interruptedMessage);
    assert.equal(current(w).status?.frozen, undefined);
  });

  it('never touches a pod of another namespace, even one a list returns', async () => {
    const w = freezeWorld({
      objects: [pod('db-0', { d: 'data' }, [{ name: 'db', mounts: { d: '/foreign' } }], { namespace: 'elsewhere' })],
    });
    const list = w.kube.list.bind(w.kube);
    w.kube.list = ((kind, opts) => list(kind, { ...opts, namespace: undefined })) as typeof w.kube.list;
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(
      w.execs.map((e) => `${e.namespace}/${e.pod} ${e.command.join(' ')}`),
      [
        ...frozenMounts.map((m) => `${ns}/${m.split('/')[0]} fsfreeze --freeze ${m.split(' ')[1]}`),
        ...frozenMounts.map((m) => `${ns}/${m.split('/')[0]} fsfreeze --unfreeze ${m.split(' ')[1]}`),
      ],
    );
  });
});
