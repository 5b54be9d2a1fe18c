// Issue 32, application backups end to end on the box's real kubelets and CSI driver: an AppBackup of a workload
// writing one counter to two volumes takes one group snapshot between its pre and post hooks (the workload records
// the order, and the restored pair agrees); a failing or hanging pre hook stops the backup before any snapshot and
// the post hooks still run; a schedule of AppBackups starts its next backup while the last one is still Uploading,
// and neither is Completed before its data is stored; a volume whose transfer fails gives PartiallyFailed while the
// others restore; three volumes restore into a new namespace identical; a cancel during Uploading stops every volume
// and leaves nothing behind.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compareTrees } from '../support/compare-tree.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { randomBytes } from '../support/repo.ts';
import { busybox } from '../cluster/testing.ts';
import {
  api,
  boundClaim,
  claims,
  ferryNamespace,
  pauseTransfer,
  settledLeftovers,
  snapshots,
  stepPids,
  uploads,
  volumePath,
  world,
} from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
const appBackups = (ns: string): string => `${api}/namespaces/${ns}/appbackups`;
const appRestores = (ns: string): string => `${api}/namespaces/${ns}/apprestores`;
const groupSnapshots = (ns: string): string =>
  `/apis/groupsnapshot.storage.k8s.io/v1/namespaces/${ns}/volumegroupsnapshots`;
const pods = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
const ended = {
  backup: ['FailedValidation', 'Completed', 'PartiallyFailed', 'Failed', 'Canceled'],
  restore: ['FailedValidation', 'Completed', 'PartiallyFailed', 'Failed'],
};
const minute = 60_000;

before(
  async () => {
    w = await world('app', ({ app, other }) => ({
      allowedNamespaces: [app, other],
      crossNamespaceRestores: [{ from: app, to: [other] }],
    }));
  },
  { timeout: 30 * minute },
);
after(() => w?.cluster.cleanup());

function appBackup(name: string, spec: Obj): Obj {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppBackup',
    metadata: { name },
    spec: { backupStorageLocation: w.location, ...spec },
  };
}

function appRestore(name: string, spec: Obj): Obj {
  return { apiVersion: 'ferry.dev/v1alpha1', kind: 'AppRestore', metadata: { name }, spec };
}

/** Polls until the resource's phase is one of `phases`; every phase it showed on the way, in order. */
async function until(path: string, phases: string[], timeoutMs = 10 * minute): Promise<{ obj: Obj; seen: string[] }> {
  const seen: string[] = [];
  for (const deadline = Date.now() + timeoutMs; ;) {
    const obj = await w.cluster.kube.get(path);
    const phase = obj.status?.phase ?? 'New';
    if (seen.at(-1) !== phase) seen.push(phase);
    if (phases.includes(phase)) return { obj, seen };
    if (Date.now() > deadline)
      throw new Error(`${path} stayed ${seen.join(' > ')}: ${JSON.stringify(obj.status ?? {}).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A shell hook: `script` run by sh in container db of pods labelled app=<app>. */
function hook(name: string, app: string, script: string, extra: Obj = {}): Obj {
  return { name, selector: { matchLabels: { app } }, container: 'db', command: ['sh', '-c', script], ...extra };
}

/**
 * A database stand-in on volumes data and wal: it appends the same counter to both, one line each, every 20 ms,
 * and pauses while /tmp/quiet exists (saying so with /tmp/paused once its last pair is written).
 */
async function counterWorkload(ns: string, app: string): Promise<{ data: string; wal: string }> {
  const data = await boundClaim(w.cluster, ns, `${app}-data`, '16Mi');
  const wal = await boundClaim(w.cluster, ns, `${app}-wal`, '16Mi');
  const loop = [
    'n=0',
    'while true; do',
    '  if [ -e /tmp/quiet ]; then touch /tmp/paused;',
    '  else rm -f /tmp/paused; n=$((n+1)); echo $n >> /data/counter; echo $n >> /wal/counter; fi',
    '  sleep 0.02',
    'done',
  ].join('\n');
  await w.cluster.kube.create(pods(ns), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: app, labels: { app } },
    spec: {
      restartPolicy: 'Never',
      securityContext: { runAsUser: 0 },
      containers: [
        {
          name: 'db',
          image: busybox,
          command: ['sh', '-c', loop],
          volumeMounts: [
            { name: 'data', mountPath: '/data' },
            { name: 'wal', mountPath: '/wal' },
          ],
        },
      ],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: `${app}-data` } },
        { name: 'wal', persistentVolumeClaim: { claimName: `${app}-wal` } },
      ],
    },
  });
  await w.cluster.kube.waitFor(`${pods(ns)}/${app}`, `pod ${app} to run`, (p) =>
    p.status?.phase === 'Running' ? p : undefined,
  );
  return { data: data.path, wal: wal.path };
}

/** The pre hook pauses the writer and records the last counter; the post hook records it again and resumes. */
const quiesce =
  'touch /tmp/quiet; while [ ! -e /tmp/paused ]; do sleep 0.01; done; echo "pre $(tail -n1 /data/counter)" >> /data/hooks.log';
const resume = 'echo "post $(tail -n1 /data/counter)" >> /data/hooks.log; rm -f /tmp/quiet';

const lastLine = async (path: string): Promise<string> => (await readFile(path, 'utf8')).trimEnd().split('\n').at(-1)!;

/** The restored claim's host path, once the AppRestore Completed. */
async function restoredPath(ns: string, pvc: string): Promise<string> {
  const claim = await w.cluster.kube.get(`${claims(ns)}/${pvc}`);
  assert.equal(claim.status?.phase, 'Bound', `restored PVC ${ns}/${pvc} is ${claim.status?.phase}`);
  return volumePath(w.cluster, claim.spec.volumeName);
}

/** What an AppBackup left behind that it should not: group snapshots, snapshots, claim labels, unfinished Jobs. */
async function leftBehind(ns: string, backup: Obj): Promise<string[]> {
  const left: string[] = [];
  const uid = backup.metadata.uid;
  for (const g of (await w.cluster.kube.get(groupSnapshots(ns))).items)
    if (g.metadata.name.includes(uid)) left.push(`VolumeGroupSnapshot ${g.metadata.name}`);
  for (const s of (await w.cluster.kube.get(snapshots(ns))).items)
    if (s.metadata.name.includes(uid)) left.push(`VolumeSnapshot ${s.metadata.name}`);
  for (const c of (await w.cluster.kube.get(claims(ns))).items)
    for (const key of Object.keys(c.metadata.labels ?? {}))
      if (key.startsWith('group.ferry.dev/')) left.push(`label ${key} on PVC ${c.metadata.name}`);
  for (const v of backup.status?.volumes ?? []) {
    const du = v.dataUpload && (await w.cluster.kube.get(`${uploads(ns)}/${v.dataUpload}`).catch(() => undefined));
    if (du) left.push(...(await settledLeftovers(w.cluster, du.metadata.uid)));
  }
  return left;
}

/** Why an AppRestore in `ns` does not happen: its denial at admission, or the message of the phase it ended in. */
async function refusal(ns: string, restore: Obj): Promise<string> {
  try {
    await w.cluster.kube.create(appRestores(ns), restore);
  } catch (err) {
    return (err as Error).message;
  }
  const { obj } = await until(`${appRestores(ns)}/${restore.metadata.name}`, ended.restore);
  assert.notEqual(obj.status.phase, 'Completed');
  return obj.status.message;
}

/** Host pids of processes whose command line contains `text` (containers' processes show in the host's /proc). */
async function processesWith(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const argv = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (argv.replaceAll('\0', ' ').includes(text)) found.push(Number(pid));
  }
  return found;
}

describe('application backups', { timeout: 60 * minute }, () => {
  it('takes one group snapshot of two volumes between the pre and post hooks; the restored pair agrees', async (t) => {
    const live = await counterWorkload(w.app, 'pg');
    // the writer has written a while: without the hooks the two volumes' copies would not agree
    await new Promise((r) => setTimeout(r, 2000));
    await w.cluster.kube.create(
      appBackups(w.app),
      appBackup('pg', {
        pvcs: ['pg-data', 'pg-wal'],
        hooks: { pre: [hook('quiesce', 'pg', quiesce)], post: [hook('resume', 'pg', resume)] },
      }),
    );
    const { obj: backup, seen } = await until(`${appBackups(w.app)}/pg`, ended.backup);
    assert.equal(backup.status.phase, 'Completed', backup.status.message);
    t.diagnostic(`phases ${seen.join(' > ')}; ${backup.status.volumesDone} volumes, ${backup.status.bytesDone} bytes`);
    assert.ok(seen.includes('InProgress') && seen.includes('Uploading'), seen.join(' > '));
    assert.equal(backup.status.consistency, 'Group');
    assert.equal(backup.status.volumesDone, '2/2');
    assert.deepEqual(
      backup.status.volumes.map((v: Obj) => [v.pvc, v.phase, Boolean(v.snapshotID)]),
      [
        ['pg-data', 'Completed', true],
        ['pg-wal', 'Completed', true],
      ],
    );
    // the order as ferry saw it: pre ended before the snapshots were cut, post began after
    const [pre, post] = backup.status.hooks;
    assert.deepEqual(
      [pre.stage, pre.hook, pre.outcome, post.stage, post.hook, post.outcome],
      ['pre', 'quiesce', 'Succeeded', 'post', 'resume', 'Succeeded'],
    );
    const snapshotAt = Date.parse(backup.status.snapshotTime);
    assert.ok(
      Date.parse(pre.endTime) <= snapshotAt && snapshotAt <= Date.parse(post.startTime),
      JSON.stringify(backup.status),
    );
    // the order as the workload saw it: nothing was written between its pre and post records
    const log = (await readFile(join(live.data, 'hooks.log'), 'utf8')).trimEnd().split('\n');
    const [, frozenAt] = log[0].split(' ');
    assert.deepEqual(log, [`pre ${frozenAt}`, `post ${frozenAt}`]);
    assert.deepEqual(await leftBehind(w.app, backup), []);

    await w.cluster.kube.create(
      appRestores(w.other),
      appRestore('pg', { appBackup: { name: 'pg', namespace: w.app } }),
    );
    const { obj: restore } = await until(`${appRestores(w.other)}/pg`, ended.restore);
    assert.equal(restore.status.phase, 'Completed', restore.status.message);
    assert.equal(restore.status.volumesDone, '2/2');
    const data = await restoredPath(w.other, 'pg-data');
    const wal = await restoredPath(w.other, 'pg-wal');
    // one instant for both volumes, inside the quiet time: both end at the counter the pre hook recorded, and the
    // snapshot holds the pre record but not the post one
    assert.equal(await lastLine(join(data, 'counter')), frozenAt);
    assert.equal(await lastLine(join(wal, 'counter')), frozenAt);
    assert.equal(await readFile(join(data, 'hooks.log'), 'utf8'), `pre ${frozenAt}\n`);
    await w.cluster.kube.delete(`${pods(w.app)}/pg`);
  });

  it('a failing pre hook with onError Fail takes no snapshot, runs the post hooks and says why; Continue goes on', async () => {
    const live = await counterWorkload(w.app, 'fail');
    const post = hook('resume', 'fail', 'echo resumed >> /data/hooks.log');
    await w.cluster.kube.create(
      appBackups(w.app),
      appBackup('fails', {
        pvcs: ['fail-data', 'fail-wal'],
        hooks: { pre: [hook('quiesce', 'fail', 'echo cannot quiesce now >&2; exit 3')], post: [post] },
      }),
    );
    const { obj: failed } = await until(`${appBackups(w.app)}/fails`, ended.backup);
    assert.equal(failed.status.phase, 'Failed');
    assert.match(failed.status.message, /quiesce/);
    assert.match(failed.status.message, /cannot quiesce now/);
    assert.deepEqual(
      failed.status.hooks.map((h: Obj) => [h.stage, h.hook, h.outcome, h.exitCode]),
      [
        ['pre', 'quiesce', 'Failed', 3],
        ['post', 'resume', 'Succeeded', 0],
      ],
    );
    assert.equal(await readFile(join(live.data, 'hooks.log'), 'utf8'), 'resumed\n');
    assert.deepEqual(failed.status.volumes?.filter((v: Obj) => v.volumeSnapshot || v.dataUpload) ?? [], []);
    assert.deepEqual(await leftBehind(w.app, failed), []);

    await w.cluster.kube.create(
      appBackups(w.app),
      appBackup('continues', {
        pvcs: ['fail-data', 'fail-wal'],
        hooks: {
          pre: [hook('quiesce', 'fail', 'echo cannot quiesce now >&2; exit 3', { onError: 'Continue' })],
          post: [post],
        },
      }),
    );
    const { obj: went } = await until(`${appBackups(w.app)}/continues`, ended.backup);
    assert.equal(went.status.phase, 'Completed', went.status.message);
    const hooks = went.status.conditions.find((c: Obj) => c.type === 'HooksSucceeded');
    assert.equal(hooks?.status, 'False', JSON.stringify(went.status.conditions));
    assert.match(hooks.message, /quiesce/);
    await w.cluster.kube.delete(`${pods(w.app)}/fail`);
  });

  it('a hanging pre hook is killed at its timeout and the post hooks still run', async () => {
    const live = await counterWorkload(w.app, 'hang');
    const marker = `sleep ${360_000 + Math.floor(Math.random() * 10_000)}`;
    await w.cluster.kube.create(
      appBackups(w.app),
      appBackup('hangs', {
        pvcs: ['hang-data'],
        hooks: {
          pre: [hook('quiesce', 'hang', marker, { timeout: '3s' })],
          post: [hook('resume', 'hang', 'echo resumed >> /data/hooks.log')],
        },
      }),
    );
    const { obj } = await until(`${appBackups(w.app)}/hangs`, ended.backup, 3 * minute);
    assert.equal(obj.status.phase, 'Failed');
    assert.deepEqual(
      obj.status.hooks.map((h: Obj) => [h.stage, h.outcome]),
      [
        ['pre', 'TimedOut'],
        ['post', 'Succeeded'],
      ],
    );
    const ran = Date.parse(obj.status.hooks[0].endTime) - Date.parse(obj.status.hooks[0].startTime);
    assert.ok(ran >= 3000 && ran < 30_000, `the hook ran ${ran} ms`);
    assert.deepEqual(await processesWith(marker), [], 'the hung command was killed');
    assert.equal(await readFile(join(live.data, 'hooks.log'), 'utf8'), 'resumed\n');
    await w.cluster.kube.delete(`${pods(w.app)}/hang`);
  });

  it('a schedule starts its next AppBackup while the last is Uploading; none is Completed before its data', async () => {
    const a = await boundClaim(w.cluster, w.app, 'sched-a', '64Mi');
    const b = await boundClaim(w.cluster, w.app, 'sched-b', '64Mi');
    await writeFile(join(a.path, 'a.bin'), randomBytes(16 * 1024 * 1024, 1));
    await writeFile(join(b.path, 'b.bin'), randomBytes(1024 * 1024, 2));
    await w.cluster.kube.create(`${api}/namespaces/${w.app}/backupschedules`, {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: 'apps' },
      spec: {
        schedule: '* * * * *',
        pvcs: ['sched-a', 'sched-b'],
        backupStorageLocation: w.location,
        appBackup: {},
        concurrencyPolicy: 'Forbid',
      },
    });
    const scheduled = async (): Promise<Obj[]> =>
      (
        await w.cluster.kube.get(`${appBackups(w.app)}?labelSelector=${encodeURIComponent('ferry.dev/schedule=apps')}`)
      ).items.sort((x: Obj, y: Obj) => x.metadata.creationTimestamp.localeCompare(y.metadata.creationTimestamp));
    const first = await w.cluster.kube.waitFor(
      `${appBackups(w.app)}?labelSelector=${encodeURIComponent('ferry.dev/schedule=apps')}`,
      'the first scheduled AppBackup to start Uploading',
      (list) => list.items.find((ab: Obj) => ab.status?.phase === 'Uploading'),
      3 * minute,
    );
    const firstName = first.metadata.name;
    const held = first.status.volumes.find((v: Obj) => v.pvc === 'sched-a').dataUpload;
    const resumeTransfer = await pauseTransfer(w, 'DataUpload', w.app, held, w.app);
    try {
      const second = await w.cluster.kube.waitFor(
        `${appBackups(w.app)}?labelSelector=${encodeURIComponent('ferry.dev/schedule=apps')}`,
        'the next run to create its AppBackup',
        (list) => list.items.find((ab: Obj) => ab.metadata.name !== firstName),
        3 * minute,
      );
      const firstNow = await w.cluster.kube.get(`${appBackups(w.app)}/${firstName}`);
      assert.equal(firstNow.status.phase, 'Uploading', 'the earlier backup is still uploading');
      assert.notEqual(second.status?.phase, 'Completed');
    } finally {
      resumeTransfer();
    }
    await w.cluster.kube.patch(`${api}/namespaces/${w.app}/backupschedules/apps`, { spec: { suspend: true } });
    for (const ab of (await scheduled()).slice(0, 2)) {
      const { obj } = await until(`${appBackups(w.app)}/${ab.metadata.name}`, ended.backup);
      assert.equal(obj.status.phase, 'Completed', obj.status.message);
      // Completed only with every volume's data in the repository
      const ids = new Set((await w.snapshotsOf(w.app)).map((s) => s.id));
      for (const v of obj.status.volumes) {
        const du = await w.cluster.kube.get(`${uploads(w.app)}/${v.dataUpload}`);
        assert.equal(du.status.phase, 'Completed');
        assert.ok(ids.has(du.status.snapshotID), `${v.pvc}'s snapshot is in the repository`);
        assert.ok(Date.parse(du.status.completionTimestamp) <= Date.parse(obj.status.completionTimestamp));
      }
    }
    await w.cluster.kube.delete(`${api}/namespaces/${w.app}/backupschedules/apps`);
  });

  it('a volume whose transfer fails makes the backup PartiallyFailed; the other volumes restore', async () => {
    const ok = await boundClaim(w.cluster, w.app, 'part-ok', '16Mi');
    const bad = await boundClaim(w.cluster, w.app, 'part-bad', '64Mi');
    await writeFile(join(ok.path, 'ok.bin'), randomBytes(1024 * 1024, 3));
    await writeFile(join(bad.path, 'bad.bin'), randomBytes(32 * 1024 * 1024, 4));
    // each attempt of the bad volume's transfer is killed; one Job pod per attempt makes the give-up quick
    const template = `/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs/ferry-step-transfer-backup`;
    const limit = (await w.cluster.kube.get(template)).spec.jobTemplate.spec.backoffLimit;
    await w.cluster.kube.patch(template, { spec: { jobTemplate: { spec: { backoffLimit: 0 } } } });
    let phases: string[] = [];
    try {
      await w.cluster.kube.create(appBackups(w.app), appBackup('partial', { pvcs: ['part-bad', 'part-ok'] }));
      const badUpload = await w.cluster.kube.waitFor(
        `${appBackups(w.app)}/partial`,
        "part-bad's DataUpload",
        (ab) => ab.status?.volumes?.find((v: Obj) => v.pvc === 'part-bad')?.dataUpload,
      );
      const sweep = (await w.cluster.kube.get(`/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs/ferry-sweep`)).spec
        .jobTemplate.spec;
      let sweptAt = Date.now();
      for (const deadline = Date.now() + 10 * minute; ;) {
        const ab = await w.cluster.kube.get(`${appBackups(w.app)}/partial`);
        if (phases.at(-1) !== ab.status?.phase) phases.push(ab.status?.phase);
        if (ended.backup.includes(ab.status?.phase)) break;
        if (Date.now() > deadline) throw new Error(`partial stayed ${phases.join(' > ')}`);
        for (const pid of await stepPids('transfer', `DataUpload/${w.app}/${badUpload}`)) process.kill(pid, 'SIGKILL');
        // the sweep retries a failed step Job; started by hand it need not wait for its minute
        if (Date.now() - sweptAt > 10_000) {
          sweptAt = Date.now();
          await w.cluster.kube.create(`/apis/batch/v1/namespaces/${ferryNamespace}/jobs`, {
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: { generateName: 'sweep-now-' },
            spec: sweep,
          });
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await w.cluster.kube.patch(template, { spec: { jobTemplate: { spec: { backoffLimit: limit } } } });
    }
    const ab = await w.cluster.kube.get(`${appBackups(w.app)}/partial`);
    assert.equal(ab.status.phase, 'PartiallyFailed', `${phases.join(' > ')}: ${ab.status.message}`);
    assert.ok(!phases.includes('Completed'), phases.join(' > '));
    assert.deepEqual(
      ab.status.volumes.map((v: Obj) => [v.pvc, v.phase]),
      [
        ['part-bad', 'Failed'],
        ['part-ok', 'Completed'],
      ],
    );
    await w.cluster.kube.create(
      appRestores(w.other),
      appRestore('partial', { appBackup: { name: 'partial', namespace: w.app } }),
    );
    const { obj: restore } = await until(`${appRestores(w.other)}/partial`, ended.restore);
    assert.equal(restore.status.phase, 'Completed', restore.status.message);
    assert.deepEqual(
      restore.status.volumes.map((v: Obj) => v.pvc),
      ['part-ok'],
    );
    assert.deepEqual(await compareTrees(ok.path, await restoredPath(w.other, 'part-ok')), []);
  });

  it('restores a three-volume backup into a new namespace with identical data; deleting it frees its data', async () => {
    const paths: Record<string, string> = {};
    for (const [i, pvc] of ['tri-a', 'tri-b', 'tri-c'].entries()) {
      paths[pvc] = (await boundClaim(w.cluster, w.app, pvc, '64Mi')).path;
      await makeFixtureTree(paths[pvc], { smallFiles: 200, bigFile: 4 * 1024 * 1024, seed: 40 + i });
    }
    await w.cluster.kube.patch(`${claims(w.app)}/tri-c`, { metadata: { labels: { tier: 'tri' } } });
    await w.cluster.kube.create(
      appBackups(w.app),
      appBackup('tri', { pvcs: ['tri-a', 'tri-b'], selector: { matchLabels: { tier: 'tri' } } }),
    );
    const { obj: backup } = await until(`${appBackups(w.app)}/tri`, ended.backup);
    assert.equal(backup.status.phase, 'Completed', backup.status.message);
    assert.equal(backup.status.volumesDone, '3/3');
    // the location allows restores from app into other only: into any other namespace the AppRestore is refused
    const target = await w.namespace('tri');
    assert.match(
      await refusal(target, appRestore('tri', { appBackup: { name: 'tri', namespace: w.app } })),
      /crossNamespaceRestores/,
    );
    await w.cluster.kube.create(
      appRestores(w.other),
      appRestore('tri', { appBackup: { name: 'tri', namespace: w.app }, pvcNames: { 'tri-a': 'restored-a' } }),
    );
    const { obj: restore } = await until(`${appRestores(w.other)}/tri`, ended.restore);
    assert.equal(restore.status.phase, 'Completed', restore.status.message);
    for (const [pvc, path] of Object.entries(paths)) {
      const restored = await restoredPath(w.other, pvc === 'tri-a' ? 'restored-a' : pvc);
      assert.deepEqual(await compareTrees(path, restored), [], `${pvc} restored identical`);
    }
    const before = (await w.snapshotsOf(w.app)).length;
    await w.cluster.kube.delete(`${appBackups(w.app)}/tri`);
    await w.cluster.kube.waitFor(
      `${uploads(w.app)}?labelSelector=${encodeURIComponent('ferry.dev/app-backup=tri')}`,
      "the AppBackup's DataUploads to be deleted with it",
      (list) => (list.items.length === 0 ? true : undefined),
      5 * minute,
    );
    assert.equal((await w.snapshotsOf(w.app)).length, before - 3, 'its three repository snapshots are forgotten');
  });

  it('a cancel during Uploading stops every volume and leaves nothing behind', async () => {
    for (const pvc of ['stop-a', 'stop-b']) {
      const { path } = await boundClaim(w.cluster, w.app, pvc, '64Mi');
      await writeFile(join(path, 'big.bin'), randomBytes(24 * 1024 * 1024, pvc === 'stop-a' ? 8 : 9));
    }
    await w.cluster.kube.create(appBackups(w.app), appBackup('stop', { pvcs: ['stop-a', 'stop-b'] }));
    const uploading = await w.cluster.kube.waitFor(
      `${appBackups(w.app)}/stop`,
      'the AppBackup to upload',
      (ab) => (ab.status?.phase === 'Uploading' ? ab : undefined),
      5 * minute,
    );
    const held = uploading.status.volumes[0].dataUpload;
    const resumeTransfer = await pauseTransfer(w, 'DataUpload', w.app, held, w.app);
    try {
      await w.cluster.kube.patch(`${appBackups(w.app)}/stop`, { spec: { cancel: true } });
    } finally {
      resumeTransfer();
    }
    const { obj } = await until(`${appBackups(w.app)}/stop`, ended.backup, 5 * minute);
    assert.equal(obj.status.phase, 'Canceled', obj.status.message);
    // the held volume was stopped; the other may have finished before the cancel came
    for (const v of obj.status.volumes) {
      const du = await w.cluster.kube.get(`${uploads(w.app)}/${v.dataUpload}`);
      const allowed = v.dataUpload === held ? ['Canceled'] : ['Canceled', 'Completed'];
      assert.ok(allowed.includes(du.status.phase), `${v.pvc}: ${du.status.phase}`);
    }
    assert.deepEqual(await leftBehind(w.app, obj), []);
    assert.deepEqual(await processesWith(`DataUpload/${w.app}/${held}`), []);
  });
});
