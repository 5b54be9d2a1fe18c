// Synced DataUploads (a location's backup sync made them for backups another cluster wrote): only the sync's account
// may create one, nobody may add, change or remove the mark afterwards, only the sync writes its status, and the
// dispatcher never starts a step for one but the delete step on its deletion.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import { decide } from '../../../src/shared/dispatch/decide.ts';
import { finalizerName } from '../../../src/shared/api/phases.ts';
import { syncedFromAnnotation } from '../../../src/shared/location/synced.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import type { DataUpload, Phase } from '../../../src/shared/api/types.ts';
import { ferryNamespace, jobs, review, upload, world } from './world.ts';

const syncUser = `system:serviceaccount:${ferryNamespace}:ferry-step-sync`;
const tenant = 'system:serviceaccount:app:default';

/** A DataUpload as the sync makes it: marked, for a claim that exists only on the other cluster. */
function synced(phase?: Phase, marks: Record<string, string> = { [syncedFromAnnotation]: 'default' }): DataUpload {
  const r = upload('nightly-1', phase) as DataUpload;
  return {
    ...r,
    metadata: {
      ...r.metadata,
      annotations: marks,
      labels: { 'ferry.dev/synced': 'true' },
      finalizers: [finalizerName],
    },
    spec: { ...r.spec, sourcePVC: 'gone-with-site-a' },
  };
}

function as(body: AdmissionReview, username: string): AdmissionReview {
  body.request!.userInfo = { username };
  return body;
}

async function answer(w: ReturnType<typeof world>, body: AdmissionReview) {
  const res = await handleReview(body, w.handler);
  return (res as { review: AdmissionReview }).review.response!;
}

describe('synced DataUploads at admission', () => {
  it("refuses a tenant's DataUpload carrying the synced mark, and starts nothing for it", async () => {
    const w = world();
    const forged = { ...synced(), spec: { sourcePVC: 'data', backupStorageLocation: 'default' } };
    const res = await answer(w, as(review('CREATE', forged), tenant));
    assert.equal(res.allowed, false);
    assert.match(res.status!.message, /ferry\.dev\/synced-from marks a DataUpload made by a location's backup sync/);
    await w.settle();
    assert.deepEqual(jobs(w.kube), []);
  });

  it("takes the sync's own, for a claim this cluster never had, and runs no step for it", async () => {
    const w = world();
    const obj = synced();
    const res = await answer(w, as(review('CREATE', obj), syncUser));
    assert.equal(res.allowed, true, JSON.stringify(res));
    w.kube.seed(obj as DataUpload & KubeObject);
    await w.settle();
    assert.deepEqual(jobs(w.kube), [], 'no snapshot Job for a synced DataUpload');
  });

  it('refuses the sync account a DataUpload without the mark, or one stored in another location', async () => {
    const w = world();
    const plain = upload('plain');
    const res = await answer(w, as(review('CREATE', plain), syncUser));
    assert.equal(res.allowed, false);
    assert.match(res.status!.message, /creates only synced DataUploads/);
    const elsewhere = synced(undefined, { [syncedFromAnnotation]: 'site-b' });
    const res2 = await answer(w, as(review('CREATE', elsewhere), syncUser));
    assert.equal(res2.allowed, false);
    assert.match(res2.status!.message, /synced from BackupStorageLocation "site-b" must be stored there/);
    await w.settle();
  });

  it("refuses the sync's own in a namespace its location does not allow", async () => {
    const w = world();
    const stray = synced();
    stray.metadata.namespace = 'stranger';
    const res = await answer(w, as(review('CREATE', stray), syncUser));
    assert.equal(res.allowed, false);
    assert.match(res.status!.message, /BackupStorageLocation "default" does not allow namespace stranger/);
    await w.settle();
  });

  it('refuses adding, changing or removing the mark later, whoever asks', async () => {
    const w = world();
    const mine = upload('mine', 'Completed');
    const added = { ...mine, metadata: { ...mine.metadata, annotations: { [syncedFromAnnotation]: 'default' } } };
    for (const [old, next] of [
      [mine, added],
      [synced('Completed'), { ...synced('Completed'), metadata: { ...synced().metadata, annotations: {} } }],
      [
        synced('Completed'),
        { ...synced('Completed'), metadata: { ...synced().metadata, annotations: { [syncedFromAnnotation]: 'x' } } },
      ],
    ]) {
      for (const user of [tenant, syncUser]) {
        const res = await answer(w, as(review('UPDATE', next, { old }), user));
        assert.equal(res.allowed, false, `${user}: ${JSON.stringify(next.metadata.annotations)}`);
        assert.match(res.status!.message, /ferry\.dev\/synced-from cannot be added, changed or removed/);
      }
    }
    await w.settle();
  });

  it("lets only the sync write a synced DataUpload's status", async () => {
    const w = world();
    const old = synced();
    const status = { phase: 'Completed', snapshotID: 'ab'.repeat(32) };
    const forged = await answer(w, as(review('UPDATE', { ...old, status }, { old, subResource: 'status' }), tenant));
    assert.equal(forged.allowed, false);
    assert.match(forged.status!.message, /only the backup sync writes its status/);
    const step = `system:serviceaccount:${ferryNamespace}:ferry-step-transfer`;
    const other = await answer(w, as(review('UPDATE', { ...old, status }, { old, subResource: 'status' }), step));
    assert.equal(other.allowed, false);
    const sync = await answer(w, as(review('UPDATE', { ...old, status }, { old, subResource: 'status' }), syncUser));
    assert.equal(sync.allowed, true, JSON.stringify(sync));
    await w.settle();
  });
});

describe('synced DataUploads in the dispatcher', () => {
  const opts = { mode: 'sweep' as const, maxAttempts: 3, now: Date.now(), settleMs: 0 };
  it('starts no step in any phase, and the delete step once it is deleted', () => {
    for (const phase of [undefined, 'New', 'Accepted', 'Prepared', 'InProgress', 'Completed'] as const)
      assert.equal(decide(synced(phase), [], opts).action, 'none', String(phase));
    const deleted = synced('Completed');
    deleted.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
    assert.deepEqual(decide(deleted, [], opts), { action: 'run', step: 'delete', attempt: 1 });
    const early = synced();
    early.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
    assert.equal(decide(early, [], opts).action, 'none', 'no cancel, no finalize: the sync completes it first');
  });
});
