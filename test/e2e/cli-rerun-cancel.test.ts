// Issue 6 on the cluster in a box: `ferry rerun` and `ferry cancel`, and the exit codes of --wait. A backup whose
// snapshot never becomes ready keeps its snapshot step busy: rerun refuses while that Job runs and starts the
// next attempt once it failed; cancel ends it, and the `create --wait` following it exits 3. A backup whose
// snapshot times out ends Failed, and its `create --wait` exits 1 saying why.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import { jobName, labels } from '../../src/shared/step-job/contract.ts';
import { backupCreateArgs, ferry, spawnFerry, type FerryRun } from '../support/ferry-cli.ts';
import { createSlowSnapshotClass, deleteSlowSnapshotClass } from '../support/slow-snapshots.ts';
import { boundClaim, ferryNamespace, uploads, world } from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let slowClass: string;
const jobsPath = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs`;

before(
  async () => {
    w = await world('cli-rerun', ({ app }) => ({ allowedNamespaces: [app] }));
    await boundClaim(w.cluster, w.app, 'data', '64Mi');
    // a snapshot class whose snapshots become ready only after half an hour
    slowClass = `slow-${w.app}`;
    await createSlowSnapshotClass(w.cluster.kube, slowClass);
  },
  { timeout: 30 * 60_000 },
);
after(async () => {
  if (w) await deleteSlowSnapshotClass(w.cluster.kube, slowClass).catch(() => undefined);
  await w?.cluster.cleanup();
});

const env = () => ({ password: null, env: { KUBECONFIG: w.cluster.kubeconfig } });
const cli = (args: string[]): Promise<FerryRun> => ferry(args, env());
const text = (r: FerryRun): string => stripVTControlCharacters(r.stdout + r.stderr);

describe('--wait exit codes, rerun and cancel', { timeout: 30 * 60_000 }, () => {
  it('create: a refusal names the flag (exit 2); -o json prints the new object, with --wait -o yaml the finished one alone', async () => {
    const denied = await cli(backupCreateArgs('bad-pvc', 'nope', w.app, w.location));
    assert.equal(denied.code, 2, text(denied));
    assert.match(stripVTControlCharacters(denied.stderr), /--pvc: PersistentVolumeClaim "nope"/);
    const created = await cli(backupCreateArgs('snap', 'data', w.app, w.location, '--snapshot-only', '-o', 'json'));
    assert.equal(created.code, 0, text(created));
    const obj = JSON.parse(created.stdout) as Obj;
    assert.equal(obj.kind, 'DataUpload');
    assert.equal(obj.spec.snapshotMoveData, false);
    assert.ok(obj.metadata.uid);
    const waited = await cli(
      backupCreateArgs('snap-waited', 'data', w.app, w.location, '--snapshot-only', '--wait', '-o', 'yaml'),
    );
    assert.equal(waited.code, 0, text(waited));
    assert.match(waited.stdout, /^apiVersion: ferry\.dev\/v1alpha1\nkind: DataUpload\n/);
    assert.match(waited.stdout, /^  phase: Completed$/m);
    assert.doesNotMatch(waited.stdout, /\[\d+s\]/, 'no progress lines among the document');
  });

  it('a backup that fails: create --wait exits 1 saying why', async () => {
    const r = await cli(
      backupCreateArgs(
        'times-out',
        'data',
        w.app,
        w.location,
        '--snapshot-class',
        slowClass,
        '--timeout',
        '3s',
        '--wait',
      ),
    );
    assert.equal(r.code, 1, text(r));
    assert.match(
      stripVTControlCharacters(r.stderr),
      new RegExp(`DataUpload ${w.app}/times-out failed: .*not ready within 3s`),
    );
  });

  it('rerun refuses while the step Job runs, starts the next attempt once it failed; cancel ends it and create --wait exits 3', async (t) => {
    const waiting = spawnFerry(
      backupCreateArgs('stuck', 'data', w.app, w.location, '--snapshot-class', slowClass, '--timeout', '30m', '--wait'),
      env(),
    );
    try {
      const du = await w.cluster.kube.waitFor(`${uploads(w.app)}/stuck`, 'the DataUpload', (o) => o, 120_000);
      const first = jobName('DataUpload', du.metadata.uid, 'snapshot', 1);
      await w.cluster.kube.waitFor(`${jobsPath}/${first}`, 'the first snapshot Job', (j) => j, 60_000);

      const busy = await cli(['rerun', 'backup/stuck', '-n', w.app]);
      assert.equal(busy.code, 1, text(busy));
      assert.match(
        stripVTControlCharacters(busy.stderr),
        new RegExp(`dataupload/stuck has no step to run again: Job ${first} is running`),
      );

      // the Job runs out of time: it fails as a stuck step would
      await w.cluster.kube.patch(`${jobsPath}/${first}`, { spec: { activeDeadlineSeconds: 1 } });
      await w.cluster.kube.waitFor(
        `${jobsPath}/${first}`,
        'the first snapshot Job to fail',
        (j) =>
          (j.status?.conditions ?? []).some((c: Obj) => c.type === 'Failed' && c.status === 'True') ? j : undefined,
        120_000,
      );
      const rerun = await cli(['rerun', 'dataupload/stuck', '-n', w.app]);
      assert.equal(rerun.code, 0, text(rerun));
      const second = jobName('DataUpload', du.metadata.uid, 'snapshot', 2);
      assert.match(
        text(rerun),
        new RegExp(`dataupload/stuck: snapshot step attempt 2 started \\(Job ${ferryNamespace}/${second}\\)`),
      );
      const job = await w.cluster.kube.get(`${jobsPath}/${second}`);
      assert.equal(job.metadata.labels[labels.uid], du.metadata.uid);
      assert.deepEqual(job.spec.template.spec.containers[0].args, ['snapshot', `DataUpload/${w.app}/stuck`]);

      const described = stripVTControlCharacters((await cli(['backup', 'describe', 'stuck', '-n', w.app])).stdout);
      assert.match(described, new RegExp(`^  snapshot attempt 1: Job ${first} failed \\(DeadlineExceeded`, 'm'));
      assert.match(described, new RegExp(`^  snapshot attempt 2: Job ${second} `, 'm'));

      const asked = Date.now();
      const cancel = await cli(['cancel', 'backup/stuck', '-n', w.app, '--wait']);
      t.diagnostic(`cancel --wait returned after ${((Date.now() - asked) / 1000).toFixed(1)} s`);
      assert.equal(cancel.code, 0, text(cancel));
      assert.match(text(cancel), /dataupload\/stuck canceled/);
      const ended = await waiting.done;
      assert.equal(ended.code, 3, text(ended));
      assert.match(stripVTControlCharacters(ended.stderr), new RegExp(`DataUpload ${w.app}/stuck was canceled`));

      const again = await cli(['cancel', 'backup/stuck', '-n', w.app]);
      assert.equal(again.code, 1, text(again));
      assert.match(
        stripVTControlCharacters(again.stderr),
        /dataupload\/stuck is Canceled; only a backup or restore still running can be canceled/,
      );
      const done = await cli(['rerun', 'backup/stuck', '-n', w.app]);
      assert.equal(done.code, 1, text(done));
      assert.match(stripVTControlCharacters(done.stderr), /has no step to run again: phase Canceled needs no step/);
      // and what to do instead
      assert.match(
        stripVTControlCharacters(done.stderr),
        new RegExp(
          `It ended Canceled, and an ended backup never runs again: back the PVC up anew with \`?ferry backup create NEW-NAME --pvc data -n ${w.app}\`?`,
        ),
      );
    } finally {
      waiting.child.kill();
    }
  });

  it('Ctrl-C during create --wait says the backup runs on and how to follow it; backup wait follows it to its end', async () => {
    const waiting = spawnFerry(
      backupCreateArgs('ctrl-c', 'data', w.app, w.location, '--snapshot-class', slowClass, '--wait'),
      env(),
    );
    const following = new Promise<void>((resolve) => waiting.child.stderr!.once('data', () => resolve()));
    await w.cluster.kube.waitFor(`${uploads(w.app)}/ctrl-c`, 'the DataUpload', (o) => o, 120_000);
    await following; // the first progress line: --wait is following it
    waiting.child.kill('SIGINT');
    const stopped = await waiting.done;
    assert.equal(stopped.code, 130, text(stopped));
    assert.match(
      stripVTControlCharacters(stopped.stderr),
      new RegExp(
        `Stopped following backup ${w.app}/ctrl-c; it is still running in the cluster \\(phase \\w+\\)\\. ` +
          `Follow it again with \`ferry backup wait ctrl-c -n ${w.app}\`, or stop it with \`ferry cancel backup/ctrl-c -n ${w.app}\``,
      ),
    );
    const du = await w.cluster.kube.get(`${uploads(w.app)}/ctrl-c`);
    assert.notEqual(du.spec.cancel, true, 'Ctrl-C stopped the following, not the backup');
    assert.ok(!['Canceling', 'Canceled'].includes(du.status?.phase), du.status?.phase);

    const again = spawnFerry(['backup', 'wait', 'ctrl-c', '-n', w.app], env());
    try {
      const cancel = await cli(['cancel', 'backup/ctrl-c', '-n', w.app]);
      assert.equal(cancel.code, 0, text(cancel));
      const ended = await again.done;
      assert.equal(ended.code, 3, text(ended));
      assert.match(stripVTControlCharacters(ended.stderr), new RegExp(`DataUpload ${w.app}/ctrl-c was canceled`));
    } finally {
      again.child.kill();
    }
  });
});
