// The maintenance step over the in-memory Kube and in-memory buckets: prune frees what no snapshot uses and records
// the bytes, a backup's live lock makes prune skip (the lock stays), check reads beside it, a dead step pod's lock
// goes, corruption is reported, and every status written passes the CRD's schema.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupStorageLocation } from '../../../src/shared/api/types.ts';
import { issueText, validateFields } from '../../../src/shared/api/schemas.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import type { Backend } from '../../../src/engine/backend/backend.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { encodeLock, newLockInfo } from '../../../src/engine/lock/lock.ts';
import { repositoryPassword } from '../../../src/shared/location/repository.ts';
import { lockStore } from '../../../src/engine/repository/lock-store.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { forgetSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { parseMaintenanceArgs } from '../../../src/steps/maintenance/command.ts';
import { readDataFraction, runMaintenance, type MaintenanceContext } from '../../../src/steps/maintenance/run.ts';
import { randomBytes, testKDF, testPolynomial } from '../../support/repo.ts';
import { ferryNamespace, harness, location, type Harness } from '../steps/harness.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-maintenance-'));
after(() => rm(scratch, { recursive: true, force: true }));
const mib = 1024 * 1024;

/** The folders under `root` of the in-memory buckets: each repository location a test opened. */
function memFolders(h: Harness): MaintenanceContext['listFolders'] {
  return async (root) =>
    [...h.backends.keys()]
      .filter((l) => l.startsWith(`${root}/`))
      .map((l) => l.slice(root.length + 1).split('/')[0])
      .sort();
}

function setup(allowed = ['app', 'empty']): Harness {
  const h = harness('delete', { lockWaitMs: 0, jobName: 'ferry-maint-prune-default-29000000' });
  (h.ctx as MaintenanceContext).listFolders = memFolders(h);
  h.kube.seed(...location(allowed));
  h.kube.on('replaceStatus', 'BackupStorageLocation', (o) => {
    const issues = validateFields('BackupStorageLocation', 'status', o.status);
    if (issues.length > 0)
      throw new Error(`invalid BackupStorageLocation status written: ${issues.map(issueText).join('; ')}`);
  });
  return h;
}

/** The app namespace's repository with two snapshots: one of a shared file, one adding a unique file. */
async function twoSnapshots(h: Harness, namespace = 'app'): Promise<{ repo: Repository; ids: string[] }> {
  const backend = h.ctx.engine.openBackend(`s3:http://127.0.0.1:9/ferry/test/${namespace}`, {});
  const repo = await Repository.init(backend, repositoryPassword('location secret', namespace), {
    kdf: testKDF,
    polynomial: testPolynomial,
  });
  const dir = join(scratch, `volume-${Math.random().toString(36).slice(2)}`);
  await mkdir(dir);
  await writeFile(join(dir, 'shared'), randomBytes(mib, 1));
  const ids = [(await backup(repo, { paths: [dir], workers: 1 })).snapshotID];
  await writeFile(join(dir, 'unique'), randomBytes(mib, 2));
  ids.push((await backup(repo, { paths: [dir], workers: 1 })).snapshotID);
  return { repo, ids };
}

async function packBytes(backend: Backend): Promise<number> {
  let total = 0;
  for await (const f of backend.list('pack')) total += f.size;
  return total;
}

function statusOf(h: Harness): BackupStorageLocation['status'] {
  return h.kube.peek<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ferryNamespace,
    name: 'default',
  })!.status;
}

async function lockCount(repo: Repository): Promise<number> {
  let n = 0;
  for await (const _ of lockStore(repo).list()) n++;
  return n;
}

test("prune frees the data of a forgotten snapshot and records the bytes freed in the location's history", async () => {
  const h = setup();
  const { repo, ids } = await twoSnapshots(h);
  await forgetSnapshots(repo, [ids[1]]);
  const before = await packBytes(repo.backend);
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'prune' });
  const freed = before - (await packBytes(repo.backend));
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.ok(freed >= mib && freed < 1.2 * mib, `freed ${freed} bytes`);
  const m = statusOf(h)!.maintenance!;
  assert.deepEqual(
    m.repositories!.map((r) => r.namespace),
    ['app'],
    'the namespace without a repository is passed over',
  );
  const [last] = m.repositories![0].runs;
  assert.equal(last.task, 'prune');
  assert.equal(last.outcome, 'Succeeded');
  assert.equal(last.bytesFreed, freed);
  assert.equal(last.job, 'ferry-maint-prune-default-29000000');
  assert.equal(m.lastOutcome, 'Succeeded');
  assert.equal(out.counters?.bytesFreed, freed);
  assert.equal(await lockCount(repo), 0, 'prune released its lock');
});

test("a backup in progress makes prune, check and check-data skip, and keeps the backup's lock", async () => {
  const h = setup();
  const { repo, ids } = await twoSnapshots(h);
  await forgetSnapshots(repo, [ids[1]]);
  const before = await packBytes(repo.backend);
  // a transfer pod that is running holds the shared lock
  h.kube.seed({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'ferry-up-0123456789abcdef-transfer-1-abcde',
      namespace: ferryNamespace,
      labels: { 'app.kubernetes.io/name': 'ferry' },
    },
    status: { phase: 'Running' },
  });
  const backupLock = await lockStore(repo).save(
    encodeLock({ ...newLockInfo(false), hostname: 'ferry-up-0123456789abcdef-transfer-1-abcde', pid: 7 }),
  );
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'prune' });
  assert.equal(out.outcome, 'Waiting', out.reason);
  const [skipped] = statusOf(h)!.maintenance!.repositories![0].runs;
  assert.equal(skipped.outcome, 'Skipped');
  assert.match(skipped.message!, /backup or restore is in progress/);
  assert.equal(await packBytes(repo.backend), before, 'nothing was deleted');
  const locks: string[] = [];
  for await (const id of lockStore(repo).list()) locks.push(id);
  assert.deepEqual(locks, [backupLock], 'the backup keeps its lock and maintenance left none');

  // check takes the exclusive lock too: a verdict on a repository a backup is writing is not recorded
  for (const task of ['check', 'check-data'] as const) {
    const check = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task });
    assert.equal(check.outcome, 'Waiting', check.reason);
    const [checked] = statusOf(h)!.maintenance!.repositories![0].runs;
    assert.deepEqual([checked.task, checked.outcome, checked.errorsFound], [task, 'Skipped', undefined]);
    assert.match(
      checked.message!,
      /^Skipped: a backup or restore is in progress \(a shared lock held by ferry-up-0123456789abcdef-transfer-1-abcde/,
    );
  }
  const after: string[] = [];
  for await (const id of lockStore(repo).list()) after.push(id);
  assert.deepEqual(after, [backupLock], 'the checks left no lock of their own');

  // once the backup has released its lock, check runs and records its verdict
  await lockStore(repo).remove(backupLock);
  const check = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'check' });
  assert.equal(check.outcome, 'Advanced', check.reason);
  const [checked] = statusOf(h)!.maintenance!.repositories![0].runs;
  assert.deepEqual([checked.task, checked.outcome, checked.errorsFound], ['check', 'Succeeded', 0]);
});

test('with every namespace allowed, the repositories are found in the bucket: one no DataUpload names is maintained', async () => {
  const h = setup(['*']);
  // the namespace's backups were all deleted before the first run: only the bucket remembers its repository
  const { repo, ids } = await twoSnapshots(h, 'gone');
  await forgetSnapshots(repo, [ids[1]]);
  const before = await packBytes(repo.backend);
  // a folder without a config file is no repository; a folder whose name is no namespace is not looked into
  h.ctx.engine.openBackend('s3:http://127.0.0.1:9/ferry/test/half-made', {});
  let opened = 0;
  const open = h.ctx.engine.openBackend;
  h.ctx.engine = { ...h.ctx.engine, openBackend: (loc, opts) => (opened++, open(loc, opts)) };
  (h.ctx as MaintenanceContext).listFolders = async (root) => [...(await memFolders(h)!(root, {})), 'Not_A_Namespace'];
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'prune' });
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.equal(opened, 2, 'the two folders named like namespaces were opened');
  const repos = statusOf(h)!.maintenance!.repositories!;
  assert.deepEqual(
    repos.map((r) => r.namespace),
    ['gone'],
  );
  assert.deepEqual([repos[0].runs[0].task, repos[0].runs[0].outcome], ['prune', 'Succeeded']);
  assert.ok(
    (repos[0].runs[0].bytesFreed ?? 0) > 0 && before - (await packBytes(repo.backend)) === repos[0].runs[0].bytesFreed,
  );
});

test('a bucket that cannot be listed leaves the namespaces the cluster knows to maintain', async () => {
  const h = setup(['app']);
  await twoSnapshots(h);
  (h.ctx as MaintenanceContext).listFolders = async () => {
    throw new Error('Access Denied');
  };
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'check' });
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.deepEqual(
    statusOf(h)!.maintenance!.repositories!.map((r) => r.namespace),
    ['app'],
  );
  assert.ok(
    h.logs.some((l) => l.includes('could not list the repositories in the bucket') && l.includes('Access Denied')),
    h.logs.join('\n'),
  );
});

test('the lock of a killed maintenance Job is removed and the run succeeds', async () => {
  const h = setup();
  const { repo } = await twoSnapshots(h);
  const dead = 'ferry-maint-prune-default-29000000-x7k2p';
  h.kube.seed({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: dead, namespace: ferryNamespace, labels: { 'app.kubernetes.io/name': 'ferry' } },
    status: { phase: 'Failed' },
  });
  await lockStore(repo).save(encodeLock({ ...newLockInfo(true), hostname: dead, pid: 7 }));
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'prune' });
  assert.equal(out.outcome, 'Advanced', out.reason);
  const [run] = statusOf(h)!.maintenance!.repositories![0].runs;
  assert.deepEqual([run.outcome, run.staleLocksRemoved], ['Succeeded', 1]);
  assert.equal(await lockCount(repo), 0);
});

test('the exclusive lock of a live holder outside the cluster is respected: prune skips', async () => {
  const h = setup();
  const { repo } = await twoSnapshots(h);
  await lockStore(repo).save(encodeLock({ ...newLockInfo(true), hostname: 'laptop-of-an-operator', pid: 7 }));
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'prune' });
  assert.equal(out.outcome, 'Waiting');
  const [run] = statusOf(h)!.maintenance!.repositories![0].runs;
  assert.equal(run.outcome, 'Skipped');
  assert.match(run.message!, /another maintenance run holds the repository's exclusive lock \(laptop-of-an-operator/);
  assert.equal(await lockCount(repo), 1);
});

test('check-data reports a corrupted pack as a failed run with the errors found', async () => {
  const h = setup();
  const { repo } = await twoSnapshots(h);
  let victim = '';
  for await (const f of repo.backend.list('pack')) victim ||= f.name;
  const bytes = await repo.backend.load({ type: 'pack', name: victim }, 0, 0);
  const damaged = Uint8Array.from(bytes);
  damaged[100] ^= 0xff;
  await repo.backend.remove({ type: 'pack', name: victim });
  await repo.backend.save({ type: 'pack', name: victim }, damaged);
  // every pack read back, so the damaged one surely is
  const bsl = h.kube.peek<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ferryNamespace,
    name: 'default',
  })!;
  await h.kube.replace({ ...bsl, spec: { ...bsl.spec, maintenance: { check: { readDataSubset: '100%' } } } });
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'check-data' });
  assert.equal(out.outcome, 'Failed');
  const status = statusOf(h)!;
  const [run] = status.maintenance!.repositories![0].runs;
  assert.equal(run.task, 'check-data');
  assert.equal(run.outcome, 'Failed');
  assert.ok((run.errorsFound ?? 0) >= 1);
  assert.match(run.message!, new RegExp(`pack ${victim} is corrupted`));
  assert.equal(status.conditions!.find((c) => c.type === 'Maintained')!.status, 'False');
});

test('a location with no repository yet has nothing to do; a missing location is skipped', async () => {
  const h = setup();
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'check' });
  assert.equal(out.outcome, 'Advanced');
  assert.match(out.reason, /No repository exists yet/);
  assert.equal(statusOf(h)?.maintenance, undefined);
  const missing = await runMaintenance(h.ctx, { mode: 'run', location: 'nowhere', task: 'check' });
  assert.equal(missing.outcome, 'Skipped');
});

test('arguments and the read-data subset', () => {
  assert.deepEqual(parseMaintenanceArgs(['default', 'check-data']), {
    mode: 'run',
    location: 'default',
    task: 'check-data',
  });
  assert.deepEqual(parseMaintenanceArgs(['--reconcile']), { mode: 'reconcile' });
  assert.throws(() => parseMaintenanceArgs(['default']), /does not name a storage location and a task/);
  assert.throws(() => parseMaintenanceArgs(['default', 'vacuum']), /does not name a storage location and a task/);
  assert.equal(readDataFraction(undefined), 0.1);
  assert.equal(readDataFraction('12.5%'), 0.125);
  assert.equal(readDataFraction('100%'), 1);
  assert.throws(() => readDataFraction('0%'), /not a percentage/);
});

test('a status written meanwhile by another maintenance Job is kept: the record is re-applied on the fresh object', async () => {
  const h = setup();
  await twoSnapshots(h);
  const key = { kind: 'BackupStorageLocation' as const, namespace: ferryNamespace, name: 'default' };
  const open = h.ctx.engine.openBackend;
  let raced = false;
  h.ctx.engine = {
    ...h.ctx.engine,
    openBackend: (loc, opts) => {
      // after the run read the location, another Job records its own run: our write now meets a Conflict
      if (!raced) {
        raced = true;
        h.kube.mutate(key, (o) => {
          o.status = {
            maintenance: {
              repositories: [
                {
                  namespace: 'other',
                  runs: [
                    { task: 'check', outcome: 'Succeeded', startTime: '2026-03-01T11:00:00Z', durationSeconds: 1 },
                  ],
                },
              ],
            },
          };
        });
      }
      return open(loc, opts);
    },
  };
  const out = await runMaintenance(h.ctx, { mode: 'run', location: 'default', task: 'check' });
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.ok(raced);
  const repos = statusOf(h)!.maintenance!.repositories!;
  assert.deepEqual(
    repos.map((r) => [r.namespace, r.runs.length]),
    [
      ['app', 1],
      ['other', 1],
    ],
  );
});
