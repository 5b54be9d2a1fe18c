// The copy step against a real MinIO, with restic as the oracle of what lands in the destination: a DataUpload's
// snapshot copied into another location's repository, readable with that location's own password; an incremental
// copy sends only new data; a copy the destination has already is a no-op; deleting a DataCopy forgets exactly its
// snapshot; a failed attempt is recorded for a retry and never touches the backup.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DataCopy } from '../../../src/shared/api/copy.ts';
import type { DataUpload } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { runCopy } from '../../../src/steps/copy/run.ts';
import { copyStep } from '../../../src/steps/copy/command.ts';
import { startMinio, type Minio } from '../../support/minio.ts';
import { restic, resticJSON } from '../../support/restic.ts';
import { backedUp, dataCopy, location, ns, resticOf, world, type World } from './world.ts';

let minio: Minio;
before(async () => {
  minio = await startMinio();
});
after(() => minio?.destroy());

interface ResticSnapshot {
  id: string;
  tags?: string[];
}

async function sites(prefix: string, extra: KubeObject[] = []): Promise<World & { a: string; b: string }> {
  const a = await minio.bucket(`${prefix}-a`);
  const b = await minio.bucket(`${prefix}-b`);
  return { ...world(minio, [...location(minio, 'site-a', a), ...location(minio, 'site-b', b), ...extra]), a, b };
}

const getCopy = (w: World, name: string) =>
  w.kube.get<DataCopy & KubeObject>({ kind: 'DataCopy', namespace: ns, name });
const getUpload = (w: World, name: string) =>
  w.kube.get<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: ns, name });

test('a DataUpload copied lands in the destination, readable by restic with the destination password only', async () => {
  const w = await sites('first');
  const du = await backedUp(w, 'nightly-1', 'site-a', { 'a.bin': 600_000, 'b.bin': 300_000 });
  w.kube.seed(dataCopy('nightly-1-copy', 'nightly-1', 'site-b'));
  const outcome = await runCopy(w.ctx, { namespace: ns, name: 'nightly-1-copy' });
  assert.equal(outcome.outcome, 'Advanced', outcome.reason);

  const dc = (await getCopy(w, 'nightly-1-copy'))!;
  assert.equal(dc.status?.phase, 'Completed');
  assert.equal(dc.status?.sourceSnapshotID, du.status?.snapshotID);
  assert.equal(dc.status?.attempts, 1);
  assert.ok(dc.metadata.finalizers?.includes('ferry.dev/copy'));
  const copied = dc.status?.conditions?.find((c) => c.type === 'Copied');
  assert.equal(copied?.status, 'True');
  assert.ok(dc.status!.stats!.bytesSent > 900_000, `bytesSent ${dc.status?.stats?.bytesSent}`);
  assert.ok(dc.status!.stats!.blobs > 0);

  const dest = resticOf(minio, 'site-b', w.b);
  const snaps = await resticJSON<ResticSnapshot[]>(dest, ['snapshots']);
  assert.deepEqual(
    snaps.map((s) => s.id),
    [dc.status?.snapshotID],
  );
  assert.ok(snaps[0].tags?.includes('ferry.dev/dataupload=nightly-1'), JSON.stringify(snaps[0].tags));
  await restic(dest, ['check', '--read-data']);
  // the source's keys do not open the copy
  await assert.rejects(restic({ ...dest, password: resticOf(minio, 'site-a', w.a).password }, ['snapshots']));

  const upload = (await getUpload(w, 'nightly-1'))!;
  assert.equal(upload.status?.phase, 'Completed');
  assert.deepEqual(upload.status?.copies, [
    {
      backupStorageLocation: 'site-b',
      dataCopy: 'nightly-1-copy',
      phase: 'Completed',
      snapshotID: dc.status?.snapshotID,
      completionTimestamp: dc.status?.completionTimestamp,
      message: dc.status?.message,
    },
  ]);
});

test('the copy of a later backup sends only the new data; a copy the destination holds already sends nothing', async (t) => {
  const w = await sites('incremental');
  await backedUp(w, 'day-1', 'site-a', { 'big.bin': 2_000_000 });
  await backedUp(w, 'day-2', 'site-a', { 'big.bin': 2_000_000, 'new.bin': 100_000 });
  w.kube.seed(dataCopy('day-1-b', 'day-1', 'site-b'), dataCopy('day-2-b', 'day-2', 'site-b'));
  assert.equal((await runCopy(w.ctx, { namespace: ns, name: 'day-1-b' })).outcome, 'Advanced');
  assert.equal((await runCopy(w.ctx, { namespace: ns, name: 'day-2-b' })).outcome, 'Advanced');
  const first = (await getCopy(w, 'day-1-b'))!.status!.stats!;
  const second = (await getCopy(w, 'day-2-b'))!.status!.stats!;
  t.diagnostic(`bytes sent: first copy ${first.bytesSent} (2 MB file), incremental ${second.bytesSent} (100 kB new)`);
  assert.ok(first.bytesSent > 2_000_000, `first ${first.bytesSent}`);
  assert.ok(second.bytesSent > 100_000 && second.bytesSent < 300_000, `second ${second.bytesSent}`);

  // another DataCopy of day-2 into the same location: found there, nothing sent, the same snapshot
  w.kube.seed(dataCopy('day-2-again', 'day-2', 'site-b'));
  assert.equal((await runCopy(w.ctx, { namespace: ns, name: 'day-2-again' })).outcome, 'Advanced');
  const again = (await getCopy(w, 'day-2-again'))!.status!;
  assert.equal(again.phase, 'Completed');
  assert.equal(again.snapshotID, (await getCopy(w, 'day-2-b'))!.status!.snapshotID);
  assert.equal(again.stats?.bytesSent, 0);
  const snaps = await resticJSON<ResticSnapshot[]>(resticOf(minio, 'site-b', w.b), ['snapshots']);
  assert.equal(snaps.length, 2);
  assert.equal((await getUpload(w, 'day-2'))!.status?.copies?.length, 2);
});

test('deleting a DataCopy forgets exactly its snapshot, drops its entry from the DataUpload, releases it', async () => {
  const w = await sites('delete');
  await backedUp(w, 'one', 'site-a', { 'x.bin': 200_000 });
  await backedUp(w, 'two', 'site-a', { 'y.bin': 200_000 });
  w.kube.seed(dataCopy('one-b', 'one', 'site-b'), dataCopy('two-b', 'two', 'site-b'));
  await runCopy(w.ctx, { namespace: ns, name: 'one-b' });
  await runCopy(w.ctx, { namespace: ns, name: 'two-b' });
  const keep = (await getCopy(w, 'two-b'))!.status!.snapshotID;
  await w.kube.delete({ kind: 'DataCopy', namespace: ns, name: 'one-b' });
  assert.ok((await getCopy(w, 'one-b'))?.metadata.deletionTimestamp, 'the finalizer holds the deletion');
  const outcome = await runCopy(w.ctx, { namespace: ns, name: 'one-b' });
  assert.equal(outcome.outcome, 'Advanced', outcome.reason);
  assert.equal(await getCopy(w, 'one-b'), undefined);
  const snaps = await resticJSON<ResticSnapshot[]>(resticOf(minio, 'site-b', w.b), ['snapshots']);
  assert.deepEqual(
    snaps.map((s) => s.id),
    [keep],
  );
  assert.deepEqual((await getUpload(w, 'one'))!.status?.copies ?? [], []);
  assert.equal((await getUpload(w, 'two'))!.status?.copies?.length, 1);
  // the source is untouched
  assert.equal((await resticJSON<ResticSnapshot[]>(resticOf(minio, 'site-a', w.a), ['snapshots'])).length, 2);
});

test('a failed attempt: Copied=False, a retry time doubling from a minute, CopyFailed Events; the backup stays Completed', async () => {
  const bucket = await minio.bucket('failing-a');
  // site-b's endpoint answers nothing
  const objects = [
    ...location(minio, 'site-a', bucket),
    ...location(minio, 'site-b', 'b', ['*'], 'http://127.0.0.1:9'),
  ];
  const w = world(minio, objects);
  await backedUp(w, 'nightly', 'site-a', { 'z.bin': 50_000 });
  w.kube.seed(dataCopy('nightly-b', 'nightly', 'site-b'));
  const outcome = await runCopy(w.ctx, { namespace: ns, name: 'nightly-b' });
  assert.equal(outcome.outcome, 'Failed');
  assert.equal(copyStep.parse(['app/nightly-b']).exitCode(outcome), 1);
  let status = (await getCopy(w, 'nightly-b'))!.status!;
  assert.equal(status.phase, 'InProgress');
  assert.equal(status.attempts, 1);
  assert.equal(status.nextAttemptTime, '2026-03-01T12:01:00Z');
  const cond = status.conditions?.find((c) => c.type === 'Copied');
  assert.equal(cond?.status, 'False');
  assert.equal(cond?.reason, 'CopyFailed');
  assert.ok(cond?.message);
  const upload = (await getUpload(w, 'nightly'))!;
  assert.equal(upload.status?.phase, 'Completed');
  assert.equal(upload.status?.copies?.[0].phase, 'InProgress');
  const events = await w.kube.list<KubeObject & { reason?: string; regarding?: { kind: string } }>('Event');
  const failed = events
    .filter((e) => e.reason === 'CopyFailed')
    .map((e) => e.regarding?.kind)
    .sort();
  assert.deepEqual(failed, ['DataCopy', 'DataUpload']);

  // the second attempt waits twice as long
  w.ctx.settings.attempt = 2;
  w.clock.ms += 61_000;
  await runCopy(w.ctx, { namespace: ns, name: 'nightly-b' });
  status = (await getCopy(w, 'nightly-b'))!.status!;
  assert.equal(status.attempts, 2);
  assert.equal(status.nextAttemptTime, '2026-03-01T12:03:01Z');
  assert.equal((await getUpload(w, 'nightly'))!.status?.phase, 'Completed');
});

test('what can never work ends Failed naming why; spec.cancel ends Canceled', async () => {
  const w = await sites('never');
  const du = await backedUp(w, 'running', 'site-a', { 'r.bin': 1000 });
  du.status = { phase: 'InProgress' };
  await w.kube.replaceStatus(du);
  w.kube.seed(dataCopy('of-running', 'running', 'site-b'), dataCopy('to-itself', 'running', 'site-a'), {
    ...dataCopy('canceled', 'running', 'site-b'),
    spec: { dataUpload: 'running', backupStorageLocation: 'site-b', cancel: true },
  });
  await runCopy(w.ctx, { namespace: ns, name: 'of-running' });
  let s = (await getCopy(w, 'of-running'))!.status!;
  assert.equal(s.phase, 'Failed');
  assert.match(s.message ?? '', /spec\.dataUpload: DataUpload app\/running is InProgress; only a Completed backup/);
  assert.equal(s.nextAttemptTime, undefined);
  await runCopy(w.ctx, { namespace: ns, name: 'canceled' });
  s = (await getCopy(w, 'canceled'))!.status!;
  assert.equal(s.phase, 'Canceled');
  assert.equal((await getUpload(w, 'running'))!.status?.phase, 'InProgress');
});

test('into a location with spec.objectLock, every file the copy needs carries that retention', async () => {
  const { GetObjectRetentionCommand, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const a = await minio.bucket('locked-a');
  const b = await minio.bucket('locked-b', { objectLock: true });
  const [bsl, secret] = location(minio, 'site-b', b);
  (bsl.spec as Record<string, unknown>).objectLock = { mode: 'GOVERNANCE', retention: '2d' };
  const w = world(minio, [...location(minio, 'site-a', a), bsl, secret]);
  await backedUp(w, 'kept', 'site-a', { 'k.bin': 100_000 });
  w.kube.seed(dataCopy('kept-b', 'kept', 'site-b'));
  const outcome = await runCopy(w.ctx, { namespace: ns, name: 'kept-b' });
  assert.equal(outcome.outcome, 'Advanced', outcome.reason);
  const listed = await minio.client.send(new ListObjectsV2Command({ Bucket: b, Prefix: `ferry/${ns}/` }));
  const keys = (listed.Contents ?? []).map((o) => o.Key!).filter((k) => !k.includes('/locks/'));
  assert.ok(keys.some((k) => k.includes('/data/')) && keys.some((k) => k.includes('/snapshots/')), keys.join(' '));
  const soon = Date.now() + 24 * 3600_000;
  for (const Key of keys) {
    const r = await minio.client.send(new GetObjectRetentionCommand({ Bucket: b, Key }));
    assert.equal(r.Retention?.Mode, 'GOVERNANCE', Key);
    assert.ok(r.Retention!.RetainUntilDate!.getTime() > soon, `${Key} retained until ${r.Retention?.RetainUntilDate}`);
  }

  // deleting it: the retained snapshot cannot be forgotten yet; the finalizer stays until the retention's end
  await w.kube.delete({ kind: 'DataCopy', namespace: ns, name: 'kept-b' });
  const waiting = await runCopy(w.ctx, { namespace: ns, name: 'kept-b' });
  assert.equal(waiting.outcome, 'Waiting', waiting.reason);
  const held = (await getCopy(w, 'kept-b'))!;
  assert.ok(held.metadata.finalizers?.includes('ferry.dev/copy'));
  assert.match(held.status?.message ?? '', /S3 Object Lock retains it until/);
  assert.ok(Date.parse(held.status!.nextAttemptTime!) > soon, held.status?.nextAttemptTime);
  const left = await resticJSON<ResticSnapshot[]>(resticOf(minio, 'site-b', b), ['snapshots']);
  assert.deepEqual(
    left.map((x) => x.id),
    [held.status?.snapshotID],
  );
});
