// Issue 31 on the cluster in a box: ferry as Velero's data mover, driven by the real Velero v1.18.2 (server and
// CLI) with its AWS plugin on the box's MinIO. A namespace with a filesystem and a block PVC is backed up with
// `--snapshot-move-data --data-mover ferry` and restored into another namespace; a stuck upload is canceled by
// Velero's operation timeout; a schedule's second backup is incremental; deleting a backup frees only its data;
// Velero's own data mover's objects are never touched. ferry's location stores under the Velero location's
// plugins/ferry/ folder, so Velero keeps that location Available.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { open, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { until } from '../cluster/testing.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { ferry } from '../support/ferry-cli.ts';
import { randomBytes } from '../support/repo.ts';
import { boundClaim, claims, pauseTransfer, settledLeftovers, snapshots, uploads, volumePath, world } from './world.ts';
import type { Obj, World } from './world.ts';

const run = promisify(execFile);
const mib = 1024 * 1024;
const velerov1 = (w: World, plural: string) => `/apis/velero.io/v1/namespaces/${w.cluster.velero.namespace}/${plural}`;
const velerov2 = (w: World, plural: string) =>
  `/apis/velero.io/v2alpha1/namespaces/${w.cluster.velero.namespace}/${plural}`;

let w: World & { app: string; other: string };
let bsl: string;
/** names of this run's Velero objects: a location's backup sync would bring back an earlier run's */
let full: string, stuck: string, hourly: string;
let fs: { pv: string; path: string };
let block: { pv: string; path: string };
/** Velero DataUploads made directly, for other movers: ferry must leave them alone */
let foreign: string[];

async function velero(args: string[]): Promise<string> {
  const { cluster } = w;
  try {
    const { stdout } = await run(
      cluster.velero.binary,
      [...args, '--kubeconfig', cluster.kubeconfig, '--namespace', cluster.velero.namespace],
      { timeout: 15 * 60_000, maxBuffer: 16 * mib },
    );
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`velero ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

const veleroUploads = async (backup: string): Promise<Obj[]> =>
  (await w.cluster.kube.get(`${velerov2(w, 'datauploads')}?labelSelector=velero.io%2Fbackup-name%3D${backup}`)).items;

const mirrorOf = (du: Obj): Promise<Obj> =>
  w.cluster.kube.get(`${uploads(du.spec.sourceNamespace)}/velero-${du.metadata.name}`);

async function backupPhase(name: string): Promise<string | undefined> {
  return (await w.cluster.kube.get(`${velerov1(w, 'backups')}/${name}`).catch(() => undefined))?.status?.phase;
}

/** What a Velero user adds to back up namespace `ns` with ferry moving the data, to this run's location. */
const ferryBackupOf = (ns: string): string[] => [
  '--include-namespaces',
  ns,
  '--snapshot-move-data',
  '--data-mover',
  'ferry',
  '--storage-location',
  bsl,
];

/** Creates a backup of `ns` and records the phases Velero showed until it ended. */
async function veleroBackup(name: string, ns: string, ...more: string[]): Promise<{ phases: string[]; backup: Obj }> {
  const phases: string[] = [];
  let done = false;
  const watching = (async () => {
    while (!done) {
      const phase = await backupPhase(name);
      if (phase && phases.at(-1) !== phase) phases.push(phase);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  try {
    await velero(['backup', 'create', name, ...ferryBackupOf(ns), '--wait', ...more]);
  } finally {
    done = true;
    await watching;
  }
  return { phases, backup: await w.cluster.kube.get(`${velerov1(w, 'backups')}/${name}`) };
}

async function writeBlock(path: string, data: Uint8Array): Promise<void> {
  const f = await open(path, 'r+');
  try {
    await f.write(data, 0, data.length, 0);
  } finally {
    await f.close();
  }
}

before(
  async () => {
    const id = Math.random().toString(16).slice(2, 8);
    bsl = `ferry-e2e-${id}`;
    foreign = [`builtin-mover-${id}`, `velero-mover-${id}`];
    [full, stuck, hourly] = ['full', 'stuck', 'hourly'].map((n) => `${n}-${id}`);
    const prefix = `velero-${id}`;
    w = await world('velero', ({ app, other }) => ({
      allowedNamespaces: [app, other],
      crossNamespaceRestores: [{ from: app, to: [other] }],
      velero: { backupStorageLocation: bsl },
    }));
    // the world's location, moved under the Velero location's plugins/ferry/ folder
    await w.cluster.kube.patch(
      `/apis/ferry.dev/v1alpha1/namespaces/ferry-system/backupstoragelocations/${w.location}`,
      {
        spec: { s3: { ...w.spec.s3, prefix: `${prefix}/plugins/ferry` } },
      },
    );
    w.spec.s3.prefix = `${prefix}/plugins/ferry`;
    await w.cluster.kube.create(velerov1(w, 'backupstoragelocations'), {
      apiVersion: 'velero.io/v1',
      kind: 'BackupStorageLocation',
      metadata: { name: bsl },
      spec: {
        provider: 'aws',
        objectStorage: { bucket: w.cluster.s3.bucket, prefix },
        credential: { name: 'cloud-credentials', key: 'cloud' },
        config: { region: 'minio', s3ForcePathStyle: 'true', s3Url: w.cluster.s3.endpoint },
      },
    });
    fs = await boundClaim(w.cluster, w.app, 'data', '512Mi');
    block = await boundClaim(w.cluster, w.app, 'disk', '64Mi', true);
    for (let i = 0; i < 6; i++) {
      await mkdir(join(fs.path, `d${i % 2}`), { recursive: true });
      await writeFile(join(fs.path, `d${i % 2}`, `f${i}.bin`), randomBytes(8 * mib, 3100 + i), { mode: 0o640 });
    }
    await writeFile(join(fs.path, 'notes.txt'), 'ferry as Velero data mover\n');
    await writeBlock(block.path, randomBytes(24 * mib, 3200));
    for (const [name, datamover] of [
      [foreign[0], ''],
      [foreign[1], 'velero'],
    ]) {
      await w.cluster.kube.create(velerov2(w, 'datauploads'), {
        apiVersion: 'velero.io/v2alpha1',
        kind: 'DataUpload',
        metadata: { name },
        spec: {
          snapshotType: 'CSI',
          csiSnapshot: { volumeSnapshot: 'none', storageClass: 'ferry-local-immediate', snapshotClass: 'ferry-local' },
          sourcePVC: 'data',
          sourceNamespace: w.app,
          backupStorageLocation: bsl,
          datamover,
          operationTimeout: '10m0s',
        },
      });
    }
    await until(`Velero location ${bsl} to be Available`, 3 * 60_000, async () => {
      const l = await w.cluster.kube.get(`${velerov1(w, 'backupstoragelocations')}/${bsl}`);
      return l.status?.phase === 'Available' ? l : undefined;
    });
  },
  { timeout: 30 * 60_000 },
);
after(async () => {
  // without its location, Velero forgets this run's backups instead of syncing them back from storage
  await w?.cluster.kube.delete(`${velerov1(w, 'backupstoragelocations')}/${bsl}`).catch(() => undefined);
  await w?.cluster.cleanup();
});

describe('ferry as Velero data mover', { timeout: 40 * 60_000 }, () => {
  it('backs up a namespace with a filesystem and a block PVC through ferry', async (t) => {
    const { phases, backup } = await veleroBackup(full, w.app);
    t.diagnostic(`Velero phases: ${phases.join(' > ')}`);
    assert.equal(backup.status.phase, 'Completed', JSON.stringify(backup.status));
    assert.ok(phases.includes('WaitingForPluginOperations'), `phases: ${phases.join(' > ')}`);
    const dus = await veleroUploads(full);
    assert.equal(dus.length, 2, 'one DataUpload per PVC');
    for (const du of dus) {
      assert.equal(du.spec.datamover, 'ferry');
      assert.equal(du.status.phase, 'Completed', JSON.stringify(du.status));
      assert.match(du.status.snapshotID, /^[0-9a-f]{64}$/);
      assert.equal(du.status.node ?? '', '', 'status.node stays empty');
      const mirror = await mirrorOf(du);
      assert.equal(mirror.status.phase, 'Completed');
      assert.equal(mirror.status.snapshotID, du.status.snapshotID);
      // ferry's own step Jobs moved the data
      assert.match(mirror.status.steps.transfer.job, /^ferry-up-.*-transfer-\d+$/);
      assert.deepEqual(await settledLeftovers(w.cluster, mirror.metadata.uid), []);
    }
    const left = (await w.cluster.kube.get(snapshots(w.app))).items.map((s: Obj) => s.metadata.name);
    assert.deepEqual(left, [], 'no VolumeSnapshot is left behind');
    const contents = (await w.cluster.kube.get('/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents')).items;
    assert.deepEqual(
      contents.filter((c: Obj) => c.spec.volumeSnapshotRef?.namespace === w.app).map((c: Obj) => c.metadata.name),
      [],
      'nor its content',
    );
    const check = await w.resticCheck(w.app, true);
    assert.match(check, /no errors were found/);
  });

  it('restores into another namespace with --namespace-mappings: identical data and metadata', async () => {
    await velero([
      'restore',
      'create',
      `${full}-restore`,
      '--from-backup',
      full,
      '--namespace-mappings',
      `${w.app}:${w.other}`,
      '--wait',
    ]);
    const restore = await w.cluster.kube.get(`${velerov1(w, 'restores')}/${full}-restore`);
    assert.equal(restore.status.phase, 'Completed', JSON.stringify(restore.status));
    const data = await w.cluster.kube.get(`${claims(w.other)}/data`);
    const disk = await w.cluster.kube.get(`${claims(w.other)}/disk`);
    assert.equal(data.status.phase, 'Bound');
    assert.equal(disk.status.phase, 'Bound');
    assert.deepEqual(await compareTrees(fs.path, await volumePath(w.cluster, data.spec.volumeName)), []);
    const restoredDisk = await readFile(await volumePath(w.cluster, disk.spec.volumeName));
    const sourceDisk = await readFile(block.path);
    assert.equal(restoredDisk.length, sourceDisk.length);
    assert.ok(restoredDisk.equals(sourceDisk), 'the block device is identical');
    const dds = (
      await w.cluster.kube.get(
        `${velerov2(w, 'datadownloads')}?labelSelector=velero.io%2Frestore-name%3D${full}-restore`,
      )
    ).items;
    assert.equal(dds.length, 2);
    for (const dd of dds) assert.equal(dd.status.phase, 'Completed', JSON.stringify(dd.status));
  });

  it("cancels a stuck upload at Velero's operation timeout: ferry's work stops and nothing is left", async (t) => {
    const ns = await w.namespace('slow');
    // the location must allow it: the test's own location, extended
    await w.cluster.kube.patch(
      `/apis/ferry.dev/v1alpha1/namespaces/ferry-system/backupstoragelocations/${w.location}`,
      {
        spec: { allowedNamespaces: [w.app, w.other, ns] },
      },
    );
    const slow = await boundClaim(w.cluster, ns, 'data', '512Mi');
    for (let i = 0; i < 4; i++) await writeFile(join(slow.path, `f${i}.bin`), randomBytes(32 * mib, 3300 + i));
    await velero(['backup', 'create', stuck, ...ferryBackupOf(ns), '--item-operation-timeout', '45s']);
    const du = await until(
      `the DataUpload of backup ${stuck}`,
      3 * 60_000,
      async () => (await veleroUploads(stuck))[0],
    );
    // pauseTransfer opens the namespace's repository, which the transfer creates only after it shows InProgress
    await until(`the repository of ${ns}`, 3 * 60_000, async () => {
      const repo = await w.repository(ns).catch(() => undefined);
      await repo?.close();
      return repo ? true : undefined;
    });
    const resume = await pauseTransfer(w, 'DataUpload', ns, `velero-${du.metadata.name}`, ns);
    try {
      // Velero refuses to delete a backup still waiting for its operations, and says so
      await velero(['backup', 'delete', stuck, '--confirm']);
      const refusal = await until('the deletion request to be processed', 60_000, async () => {
        const reqs = (await w.cluster.kube.get(velerov1(w, 'deletebackuprequests'))).items;
        const mine = reqs.find((r: Obj) => r.spec.backupName === stuck && r.status?.phase === 'Processed');
        return mine;
      });
      t.diagnostic(`velero backup delete of an uploading backup: ${JSON.stringify(refusal.status.errors)}`);
      assert.match(JSON.stringify(refusal.status.errors), /still in progress/);
      const ended = await until(`backup ${stuck} to end`, 5 * 60_000, async () => {
        const phase = await backupPhase(stuck);
        return phase && ['Completed', 'PartiallyFailed', 'Failed'].includes(phase) ? phase : undefined;
      });
      assert.notEqual(ended, 'Completed');
    } finally {
      resume();
    }
    const mirror = await until('the mirror to end', 3 * 60_000, async () => {
      const m = await mirrorOf(du);
      return ['Canceled', 'Failed', 'Completed'].includes(m.status?.phase) ? m : undefined;
    });
    assert.equal(mirror.status.phase, 'Canceled', JSON.stringify(mirror.status));
    const veleroDu = await until('Velero to show the cancel', 60_000, async () => {
      const d = await w.cluster.kube.get(`${velerov2(w, 'datauploads')}/${du.metadata.name}`);
      return d.status?.phase === 'Canceled' ? d : undefined;
    });
    assert.equal(veleroDu.status.phase, 'Canceled');
    assert.deepEqual(await settledLeftovers(w.cluster, mirror.metadata.uid, 60_000), []);
    assert.deepEqual((await w.cluster.kube.get(snapshots(ns))).items, [], 'no VolumeSnapshot left');
  });

  it('runs a Velero schedule twice; the second backup is incremental in ferry', async () => {
    await velero(['schedule', 'create', hourly, '--schedule', '@every 1m', ...ferryBackupOf(w.app)]);
    try {
      const backups = await until('two completed scheduled backups', 6 * 60_000, async () => {
        const list = (
          await w.cluster.kube.get(`${velerov1(w, 'backups')}?labelSelector=velero.io%2Fschedule-name%3D${hourly}`)
        ).items as Obj[];
        const done = list.filter((b) => b.status?.phase === 'Completed');
        return done.length >= 2 ? done : undefined;
      });
      const [, second] = backups.sort((a, b) =>
        a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp),
      );
      for (const du of await veleroUploads(second.metadata.name)) {
        const mirror = await mirrorOf(du);
        assert.match(mirror.status.parentSnapshotID ?? '', /^[0-9a-f]{64}$/, 'made from a parent snapshot');
        assert.ok(
          mirror.status.stats.bytesAdded < mirror.status.stats.bytes / 10,
          `new data ${mirror.status.stats.bytesAdded} of ${mirror.status.stats.bytes}`,
        );
      }
    } finally {
      await velero(['schedule', 'delete', hourly, '--confirm']);
    }
  });

  it("deleting a Velero backup frees its data in ferry's repository; another backup's stays", async () => {
    const theirs = (await veleroUploads(full)).map((du) => du.status.snapshotID as string);
    const mirrors = await Promise.all((await veleroUploads(full)).map(mirrorOf));
    const before = (await w.snapshotsOf(w.app)).map((s) => s.id);
    for (const id of theirs) assert.ok(before.includes(id));
    // a mirror deleted by hand while its Velero backup exists keeps the data
    await w.cluster.kube.delete(`${uploads(w.app)}/${mirrors[0].metadata.name}`);
    const held = await until('the delete step to hold the data', 3 * 60_000, async () => {
      const m = await w.cluster.kube.get(`${uploads(w.app)}/${mirrors[0].metadata.name}`);
      return /Velero backup .* still exists/.test(m.status?.message ?? '') ? m : undefined;
    });
    assert.ok(held.metadata.deletionTimestamp);
    assert.ok(
      (await w.snapshotsOf(w.app)).some((s) => s.id === theirs[0]),
      'the data is still there',
    );

    await velero(['backup', 'delete', full, '--confirm']);
    await until(`backup ${full} and its mirrors to be gone`, 5 * 60_000, async () => {
      if (await backupPhase(full)) return undefined;
      for (const m of mirrors) {
        if (await w.cluster.kube.get(`${uploads(w.app)}/${m.metadata.name}`).catch(() => undefined)) return undefined;
      }
      return true;
    });
    const after = (await w.snapshotsOf(w.app)).map((s) => s.id);
    for (const id of theirs) assert.ok(!after.includes(id), `snapshot ${id.slice(0, 8)} freed`);
    assert.ok(after.length >= 2, "the scheduled backups' snapshots stay");
    assert.match(await w.resticCheck(w.app, false), /no errors were found/);
  });

  it('ferry doctor checks the Velero side: a served location, and one served twice', async () => {
    const doctor = async (): Promise<Obj[]> => {
      const r = await ferry(['doctor', '--location', w.location, '-o', 'json'], {
        password: null,
        env: { KUBECONFIG: w.cluster.kubeconfig },
      });
      return (JSON.parse(r.stdout).findings as Obj[]).filter((f) => f.area === 'velero');
    };
    const findings = await doctor();
    const mine = findings.find((f) => f.subject === bsl);
    assert.equal(mine?.severity, 'ok', JSON.stringify(findings));
    assert.match(mine.message, new RegExp(`served by ferry location ${w.location}`));
    assert.ok(
      findings.some((f) => f.subject === 'dispatcher' && f.severity === 'ok'),
      JSON.stringify(findings),
    );
    assert.ok(
      findings.some((f) => f.subject === 'webhook' && f.severity === 'ok'),
      JSON.stringify(findings),
    );
    const twin = `${w.location}-twin`;
    await w.cluster.kube.create('/apis/ferry.dev/v1alpha1/namespaces/ferry-system/backupstoragelocations', {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name: twin },
      spec: w.spec,
    });
    try {
      const twice = (await doctor()).find((f) => f.subject === bsl);
      assert.equal(twice?.severity, 'problem');
      assert.match(twice.message, /Several ferry locations serve/);
    } finally {
      await w.cluster.kube.delete(`/apis/ferry.dev/v1alpha1/namespaces/ferry-system/backupstoragelocations/${twin}`);
    }
  });

  it("never touches DataUploads of Velero's own data mover", async () => {
    for (const name of foreign) {
      const du = await w.cluster.kube.get(`${velerov2(w, 'datauploads')}/${name}`);
      assert.equal(du.status?.phase ?? '', '', `${name} was left alone`);
      const mirror = await w.cluster.kube.get(`${uploads(w.app)}/velero-${name}`).catch(() => undefined);
      assert.equal(mirror, undefined);
    }
  });
});
