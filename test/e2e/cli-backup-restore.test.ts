// Issue 6 on the cluster in a box: `ferry backup` and `ferry restore` as a user runs them with a kubeconfig.
// A backup created with --wait on a terminal draws a progress bar with phase, bytes and rate and ends with one
// line saying how it went; get/describe/logs show it (tables, -o json|yaml|wide, phase history, Jobs with their
// termination messages, sizes, Events); a restore with --wait and no terminal prints plain lines and gives the
// same files; delete --wait returns once the backup and its repository data are gone.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { compareTrees } from '../support/compare-tree.ts';
import { backupCreateArgs, cliEntry, ferry, nodeBin, type FerryRun } from '../support/ferry-cli.ts';
import { randomBytes } from '../support/repo.ts';
import { runInTerminal } from '../support/tmux.ts';
import { boundClaim, claims, reportProgressEvery, uploads, volumePath, world } from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let source: { pv: string; path: string };
const mib = 1024 * 1024;
const waitMs = 15 * 60_000;

before(
  async () => {
    w = await world('cli', ({ app, other }) => ({
      allowedNamespaces: [app, other],
      crossNamespaceRestores: [{ from: app, to: [other] }],
    }));
    source = await boundClaim(w.cluster, w.app, 'data', '1Gi');
    // incompressible data, and progress every 200 ms, so that the transfer reports bytes moving more than once (a
    // 128 MiB transfer can end within the default 3 s); 512 MiB, so that it lasts across more than one of the CLI's
    // one-second looks (at 128 MiB ferry's transfer took about a second, and --wait once saw it only at 0 B)
    await reportProgressEvery(w.cluster, 200);
    for (let i = 0; i < 8; i++) {
      await mkdir(join(source.path, `d${i % 2}`), { recursive: true });
      await writeFile(join(source.path, `d${i % 2}`, `f${i}.bin`), randomBytes(64 * mib, 600 + i));
    }
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

/** ferry with the box's kubeconfig through KUBECONFIG, as a user's shell would have it. */
function cli(args: string[]): Promise<FerryRun> {
  return ferry(args, { password: null, env: { KUBECONFIG: w.cluster.kubeconfig } });
}

/** `ferry restore create NAME` of the backup "full" into the other namespace, then `more` */
function restoreFull(name: string, ...more: string[]): string[] {
  return ['restore', 'create', name, '--from', 'full', '-n', w.app, '--to-namespace', w.other, ...more];
}

async function cliOK(args: string[]): Promise<string> {
  const r = await cli(args);
  assert.equal(r.code, 0, `ferry ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return stripVTControlCharacters(r.stdout);
}

describe('ferry backup', { timeout: 30 * 60_000 }, () => {
  it('create --wait on a terminal draws a bar with phase, bytes and rate, then says how it ended (exit 0)', async (t) => {
    const started = Date.now();
    const run = await runInTerminal(
      [
        nodeBin,
        cliEntry,
        ...backupCreateArgs('full', 'data', w.app, w.location, '--wait', '--kubeconfig', w.cluster.kubeconfig),
      ],
      { timeoutMs: waitMs },
    );
    t.diagnostic(
      `backup create --wait took ${((Date.now() - started) / 1000).toFixed(1)} s; ${run.screens.length} screens seen`,
    );
    const final = stripVTControlCharacters(run.final);
    assert.equal(run.code, 0, final);
    const bars = run.screens.flatMap((s) => s.split('\n')).filter((l) => /\] InProgress \[[#.]{24}\] /.test(l));
    assert.ok(bars.length > 0, `no progress bar during InProgress on any screen:\n${run.screens.join('\n----\n')}`);
    // a bar with bytes moved, the total, a percentage and a rate
    const moving = bars.find((l) =>
      /\[#*\.*\] (?!0 B)[\d.]+ (B|KiB|MiB) \/ 512\.0 MiB \([\d.]+%\), [\d.]+ (B|KiB|MiB)\/s/.test(l),
    );
    assert.ok(moving, `no bar showed bytes moving:\n${bars.join('\n')}`);
    t.diagnostic(`a bar seen: ${moving.trim()}`);
    assert.ok(
      run.screens.some((s) => /\] (New|Accepted|Prepared) /.test(s)),
      'the phases before the transfer were shown',
    );
    assert.match(
      final,
      /backup full Completed: snapshot [0-9a-f]{8}, 512\.0 MiB in 8 files, [\d.]+ (B|KiB|MiB) added, took \d+/,
    );
  });

  it('get lists it as a table, -o wide adds the snapshot, -o json and -o yaml give the object', async () => {
    const table = await cliOK(['backup', 'get', '-n', w.app]);
    assert.match(table, /^NAME\s+PHASE\s+PROGRESS\s+BYTES\s+LOCATION\s+AGE\n/);
    assert.match(
      table,
      new RegExp(`^full\\s+Completed\\s+100%\\s+512\\.0 MiB/512\\.0 MiB\\s+${w.location}\\s+\\d+`, 'm'),
    );
    const obj = JSON.parse(await cliOK(['backup', 'get', 'full', '-n', w.app, '-o', 'json'])) as Obj;
    assert.equal(obj.kind, 'DataUpload');
    assert.equal(obj.status.phase, 'Completed');
    assert.match(obj.status.snapshotID, /^[0-9a-f]{64}$/);
    const wide = await cliOK(['backup', 'get', '-n', w.app, '-o', 'wide']);
    assert.match(wide, /\bSNAPSHOT\b/);
    assert.ok(wide.includes(obj.status.snapshotID.slice(0, 8)), wide);
    const yaml = await cliOK(['backup', 'get', 'full', '-n', w.app, '-o', 'yaml']);
    assert.match(yaml, /^kind: DataUpload$/m);
    assert.match(yaml, new RegExp(`^  snapshotID: "?${obj.status.snapshotID}"?$`, 'm'));
    const list = JSON.parse(await cliOK(['backup', 'get', '-n', w.app, '-o', 'json'])) as Obj;
    assert.equal(list.kind, 'List');
    assert.deepEqual(
      list.items.map((i: Obj) => i.metadata.name),
      ['full'],
    );
    const none = await cli(['backup', 'get', '-n', w.other]);
    assert.equal(none.code, 0);
    assert.equal(none.stdout, '');
    assert.match(none.stderr, new RegExp(`No DataUploads found in namespace ${w.other}`));
  });

  it('describe shows phase history, conditions, Jobs with termination messages, sizes and Events', async () => {
    const text = await cliOK(['backup', 'describe', 'full', '-n', w.app]);
    const obj = await w.cluster.kube.get(`${uploads(w.app)}/full`);
    assert.match(text, /^Phase:\s+Completed$/m);
    assert.match(text, new RegExp(`^Snapshot ID:\\s+${obj.status.snapshotID}$`, 'm'));
    const history = text.slice(text.indexOf('Phase history:'), text.indexOf('Conditions:'));
    const phases = [...history.matchAll(/^  \S+\s+(New|Accepted|Prepared|InProgress|Finalizing|Completed)\b/gm)].map(
      (m) => m[1],
    );
    assert.deepEqual(phases, ['New', 'Accepted', 'Prepared', 'InProgress', 'Finalizing', 'Completed'], history);
    assert.match(text, /^  Total:\s+512\.0 MiB in 8 files$/m);
    assert.match(text, /^  Added:\s+[\d.]+ (KiB|MiB)$/m);
    assert.match(text, /^  Deduplicated:\s+[\d.]+ (B|KiB|MiB)$/m);
    assert.match(text, /^  Stored:\s+[\d.]+ (KiB|MiB)$/m);
    assert.match(text, /^  DataMoved\s+True\s+DataMoved\s/m);
    assert.match(text, /^  snapshot attempt 1: Job ferry-up-[0-9a-f]{16}-snapshot-1 succeeded/m);
    assert.match(text, /^    pod ferry-up-[0-9a-f]{16}-snapshot-1-\w+: exit 0 \(Completed\)/m);
    assert.match(text, /^      termination message: \{"outcome":"Advanced","reason":"snapshot ferry-/m);
    const events = text.slice(text.indexOf('Events:'));
    for (const reason of ['SnapshotReady', 'Exposed', 'TransferStarted', 'DataMoved', 'Completed'])
      assert.match(events, new RegExp(`\\b${reason}\\b`));
    const doc = JSON.parse(await cliOK(['backup', 'describe', 'full', '-n', w.app, '-o', 'json'])) as Obj;
    assert.equal(doc.object.metadata.uid, obj.metadata.uid);
    assert.deepEqual(
      doc.phaseHistory.map((h: Obj) => h.phase),
      phases,
    );
    assert.ok(doc.jobs.some((j: Obj) => j.step === 'snapshot' && j.state === 'succeeded' && j.pods[0].exitCode === 0));
    assert.ok(doc.events.some((e: Obj) => e.reason === 'DataMoved'));
  });

  it('logs prints every step pod still there, in step order, under a header each, and a summary for the removed transfer Job', async () => {
    const text = await cliOK(['backup', 'logs', 'full', '-n', w.app]);
    const headers = [...text.matchAll(/^==> (\w+) attempt (\d+): Job (\S+), pod (\S+) \((.*)\) <==$/gm)];
    const steps = headers.map((h) => h[1]);
    assert.ok(steps.includes('snapshot') && steps.includes('finalize'), text.slice(0, 2000));
    const order = ['snapshot', 'expose', 'transfer', 'finalize'];
    assert.deepEqual(
      steps,
      [...steps].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
      'in step order',
    );
    // the steps log JSON lines naming the resource
    const snapshotLog = text.slice(headers[0].index, headers[1]?.index);
    assert.match(snapshotLog, new RegExp(`"resource":"DataUpload/${w.app}/full"`));
    const only = await cliOK(['backup', 'logs', 'full', '-n', w.app, '--step', 'snapshot']);
    assert.deepEqual(
      [...only.matchAll(/^==> (\w+) attempt/gm)].map((m) => m[1]),
      steps.filter((s) => s === 'snapshot'),
    );
    // finalize removed the transfer Job (its pod held the exposed PVC): logs says so, between expose and finalize,
    // with what status kept of it
    assert.ok(!steps.includes('transfer'), 'the transfer pod is gone');
    const removed =
      /^==> transfer attempt 1: Job ferry-up-[0-9a-f]{16}-transfer-1 removed after completion \(its pod held the exposed volume\) <==\nits summary: ended at \S+Z after \d+(s|m\d*s?): Backed up 8 file\(s\), 536870912 bytes, into snapshot [0-9a-f]{8}; \d+ bytes were new; 8 files, 512\.0 MiB read, [\d.]+ (B|KiB|MiB) new, [\d.]+ (B|KiB|MiB) stored, in [\d.]+s on node \S+$/m;
    const at = text.search(removed);
    assert.ok(at > 0, text.slice(-3000));
    assert.ok(at > text.indexOf('==> expose attempt') && at < text.indexOf('==> finalize attempt'), 'in step order');
    assert.match(await cliOK(['backup', 'logs', 'full', '-n', w.app, '--step', 'transfer']), removed);
  });

  it('create --tag and --expire fill spec.tags and spec.expire; delete -l deletes every backup with the labels', async () => {
    for (const name of ['tagged-1', 'tagged-2']) {
      const made = JSON.parse(
        await cliOK(
          backupCreateArgs(
            name,
            'data',
            w.app,
            w.location,
            '--snapshot-only',
            '--tag',
            'team=db',
            '--tag',
            'tier=gold',
            '--expire',
            '720h',
            '-o',
            'json',
          ),
        ),
      ) as Obj;
      assert.deepEqual(made.spec.tags, { team: 'db', tier: 'gold' });
      assert.equal(made.spec.expire, '720h');
      await w.cluster.kube.patch(`${uploads(w.app)}/${name}`, { metadata: { labels: { suite: 'tagged' } } });
    }
    const none = await cli(['backup', 'delete', '-l', 'suite=nothing', '-n', w.app]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, new RegExp(`No DataUploads in namespace ${w.app} match -l suite=nothing`));
    const out = await cliOK(['backup', 'delete', '-l', 'suite=tagged', '-n', w.app, '--wait']);
    assert.match(out, /dataupload\/tagged-1 deleted/);
    assert.match(out, /dataupload\/tagged-2 deleted/);
    assert.equal(await w.cluster.kube.find(`${uploads(w.app)}/tagged-1`), undefined);
    assert.ok(await w.cluster.kube.find(`${uploads(w.app)}/full`), 'backups without the labels stay');
  });
});

describe('ferry restore', { timeout: 30 * 60_000 }, () => {
  it('create --wait without a terminal prints plain progress lines and restores the same files (exit 0)', async (t) => {
    const started = Date.now();
    const r = await cli(restoreFull('copy', '--wait'));
    t.diagnostic(`restore create --wait took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const out = stripVTControlCharacters(r.stdout + r.stderr);
    assert.equal(r.code, 0, out);
    assert.ok(!out.includes('\r') && !/\[#*\.+\]/.test(out), 'no bar and no carriage returns without a terminal');
    const lines = out.split('\n').filter((l) => /^\[\d+(s|m\d\ds)\] \w+ /.test(l));
    const phases = [...new Set(lines.map((l) => l.split(' ')[1]))];
    assert.ok(phases.length >= 2 && phases.at(-1) === 'Completed', `phases shown: ${phases.join(', ')}\n${out}`);
    // a restore's words, and as many files as the backup counted
    assert.match(out, /restore copy Completed: restored 512\.0 MiB in 8 files from snapshot [0-9a-f]{8}, took/);
    const backup = await w.cluster.kube.get(`${uploads(w.app)}/full`);
    assert.equal(backup.status.stats.files, 8);
    const pvc = await w.cluster.kube.get(`${claims(w.other)}/data`);
    assert.equal(pvc.status.phase, 'Bound');
    // the backed-up PVC's class, not the cluster's default (ferry-local)
    assert.equal(pvc.spec.storageClassName, 'ferry-local-immediate');
    assert.deepEqual(await compareTrees(source.path, await volumePath(w.cluster, pvc.spec.volumeName)), []);
  });

  it('get, describe and logs work on it like on a backup', async () => {
    const table = await cliOK(['restore', 'get', '-n', w.other, '-o', 'wide']);
    assert.match(table, new RegExp(`^copy\\s+Completed\\s+100%.*backup ${w.app}/full\\s+data\\s`, 'm'));
    const text = await cliOK(['restore', 'describe', 'copy', '-n', w.other]);
    assert.match(text, new RegExp(`^From:\\s+backup ${w.app}/full$`, 'm'));
    assert.match(text, /^ {2}Restored: +512\.0 MiB in 8 files$/m);
    assert.doesNotMatch(text, /Added|Deduplicated|Stored/);
    assert.match(text, /^  expose attempt 1: Job ferry-down-[0-9a-f]{16}-expose-1 succeeded/m);
    const logs = await cliOK(['restore', 'logs', 'copy', '-n', w.other, '--step', 'expose']);
    assert.match(logs, /^==> expose attempt 1: Job ferry-down-/m);
    const yaml = await cliOK(['restore', 'describe', 'copy', '-n', w.other, '-o', 'yaml']);
    assert.match(yaml, /^  kind: DataDownload$/m);
  });

  it('--storage-class and --size choose the new PVC; a class that makes no volume times out naming it', async () => {
    await cliOK(restoreFull('sized', '--pvc', 'sized', '--storage-class', 'ferry-local', '--size', '2Gi', '--wait'));
    const pvc = await w.cluster.kube.get(`${claims(w.other)}/sized`);
    assert.equal(pvc.spec.storageClassName, 'ferry-local');
    assert.equal(pvc.spec.resources.requests.storage, '2Gi');

    // the backup recorded its PVC's class: a restore made once that PVC is gone (the usual disaster) still keeps it
    assert.equal((await w.cluster.kube.get(`${uploads(w.app)}/full`)).status.storageClassName, 'ferry-local-immediate');
    await w.cluster.kube.delete(`${claims(w.app)}/data`);
    for (const deadline = Date.now() + 120_000; await w.cluster.kube.find(`${claims(w.app)}/data`);) {
      assert.ok(Date.now() < deadline, 'the source PVC is gone within 2 minutes');
      await new Promise((r) => setTimeout(r, 500));
    }
    await cliOK(restoreFull('kept', '--pvc', 'kept', '--wait'));
    assert.equal((await w.cluster.kube.get(`${claims(w.other)}/kept`)).spec.storageClassName, 'ferry-local-immediate');

    const stuck = `no-driver-${w.other}`;
    await w.cluster.kube.create('/apis/storage.k8s.io/v1/storageclasses', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: stuck },
      provisioner: 'nobody.example.com',
      volumeBindingMode: 'Immediate',
    });
    try {
      const r = await cli(
        restoreFull('stuck', '--pvc', 'stuck', '--storage-class', stuck, '--timeout', '10s', '--wait'),
      );
      const err = stripVTControlCharacters(r.stderr);
      assert.equal(r.code, 1, err);
      assert.match(
        err,
        new RegExp(
          `was not bound within 10s: StorageClass ${stuck} \\(provisioner nobody\\.example\\.com\\) made no volume`,
        ),
      );
      assert.match(err, /removed as the restore ends; .*--storage-class/);
      assert.doesNotMatch(err, /see its events/, 'the PVC it would point at is gone by then');
    } finally {
      await w.cluster.kube.delete(`/apis/storage.k8s.io/v1/storageclasses/${stuck}`);
    }
  });

  it('delete removes it; backup delete --wait returns once the backup and its repository data are gone', async () => {
    await cliOK(['restore', 'delete', 'copy', '-n', w.other]);
    const uid = (await w.cluster.kube.get(`${uploads(w.app)}/full`)).metadata.uid;
    assert.ok((await w.snapshotsOf(w.app)).some((e) => e.snapshot.tags.includes(`ferry.dev/uid=${uid}`)));
    const out = await cliOK(['backup', 'delete', 'full', '-n', w.app, '--wait']);
    assert.match(out, /dataupload\/full deleted/);
    assert.equal(await w.cluster.kube.find(`${uploads(w.app)}/full`), undefined);
    assert.ok(
      !(await w.snapshotsOf(w.app)).some((e) => e.snapshot.tags.includes(`ferry.dev/uid=${uid}`)),
      'its repository snapshot is forgotten',
    );
    const again = await cli(['backup', 'delete', 'full', '-n', w.app]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, new RegExp(`DataUpload "full" not found in namespace ${w.app}`));
  });
});
