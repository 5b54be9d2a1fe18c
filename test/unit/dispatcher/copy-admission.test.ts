// The webhook on DataCopies and CopyPolicies, with forged reviews: a copy goes only into a location that takes the
// backup's namespace and is not the backup's own, the refusal names the rule; a DataCopy's spec stays as created but
// for cancel; a CopyPolicy lives in ferry's namespace and names only namespaces its destination takes. A refused
// review writes nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import type { CopyPolicy, DataCopy } from '../../../src/shared/api/copy.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { answer, allowed, denied } from './verdicts.ts';
import { ferryNamespace, location, review, upload, world } from './world.ts';
import type { World } from './world.ts';

function copyWorld(): World {
  const w = world();
  const readOnly = location('recovery', ['*']);
  (readOnly.spec as Record<string, unknown>).recoverVersions = true;
  w.kube.seed(
    location('site-b', ['app', 'b']),
    location('site-c', ['other']),
    location('everywhere', ['*']),
    readOnly,
    upload('nightly', 'Completed'),
  );
  return w;
}

function dataCopy(spec: Partial<DataCopy['spec']> = {}, status?: DataCopy['status']): DataCopy & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataCopy',
    metadata: { name: 'nightly-copy', namespace: 'app', uid: 'c0c0c0c0-0000-4000-8000-000000000000' },
    spec: { dataUpload: 'nightly', backupStorageLocation: 'site-b', ...spec },
    ...(status ? { status } : {}),
  };
}

function policy(spec: Partial<CopyPolicy['spec']> = {}, namespace = ferryNamespace): CopyPolicy & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'CopyPolicy',
    metadata: { name: 'to-site-b', namespace, generation: 1 },
    spec: { sourceLocation: 'default', destinationLocation: 'site-b', ...spec },
  };
}

// as JSON, the way the apiserver sends it: a field set to undefined is no field
const create = (r: unknown): AdmissionReview => review('CREATE', JSON.parse(JSON.stringify(r)));

/** Runs `check`, then asserts the webhook only read the cluster meanwhile. */
async function readsOnly(w: World, check: () => Promise<void>): Promise<void> {
  const from = w.kube.actions.length;
  await check();
  await w.settle();
  const writes = w.kube.actions.slice(from).filter((a) => a.verb !== 'get' && a.verb !== 'list');
  assert.deepEqual(writes, []);
}

describe('DataCopy admission', () => {
  it('admits a copy into a location that takes the namespace, by name or by "*"', async () => {
    const w = copyWorld();
    await allowed(w, create(dataCopy()));
    await allowed(w, create(dataCopy({ backupStorageLocation: 'everywhere', expire: '720h', operationTimeout: '1h' })));
  });

  it('refuses a destination that does not allow the namespace, naming the location, its list and the namespace', async () => {
    const w = copyWorld();
    await readsOnly(w, () =>
      denied(
        w,
        create(dataCopy({ backupStorageLocation: 'site-c' })),
        /^spec\.backupStorageLocation: location "site-c" allows namespaces \[other\], not "app"$/,
        403,
      ),
    );
  });

  it("refuses the DataUpload's own location, a missing one and one that only reads", async () => {
    const w = copyWorld();
    await readsOnly(w, async () => {
      await denied(
        w,
        create(dataCopy({ backupStorageLocation: 'default' })),
        /^spec\.backupStorageLocation: DataUpload "nightly" is stored in location "default" already; a copy must go to another location$/,
      );
      await denied(
        w,
        create(dataCopy({ backupStorageLocation: 'site-z' })),
        /^spec\.backupStorageLocation: BackupStorageLocation "site-z" does not exist in namespace ferry-system$/,
      );
      await denied(
        w,
        create(dataCopy({ backupStorageLocation: 'recovery' })),
        /^spec\.backupStorageLocation: location "recovery" has spec\.recoverVersions set, so it only reads/,
      );
    });
  });

  it('takes names and durations up to their limits and refuses them past, naming the field; spec.policy only from ferry', async () => {
    const w = copyWorld();
    await allowed(w, create(dataCopy({ dataUpload: 'a'.repeat(253), expire: '1ms', operationTimeout: '1h30m' })));
    const byFerry = create(dataCopy({ policy: 'p'.repeat(253) }));
    byFerry.request!.userInfo = { username: `system:serviceaccount:${ferryNamespace}:ferry-dispatcher` };
    await allowed(w, byFerry);
    await readsOnly(w, () =>
      denied(
        w,
        create(dataCopy({ policy: 'to-site-b' })),
        /^spec\.policy: only ferry's dispatcher makes the copies of a CopyPolicy/,
        403,
      ),
    );
    for (const [spec, pattern] of [
      [{ dataUpload: 'a'.repeat(254) }, /^spec\.dataUpload: must be at most 253 characters long$/],
      [{ dataUpload: 'Nightly' }, /^spec\.dataUpload: must be a DNS-1123 subdomain/],
      [{ backupStorageLocation: '' }, /^spec\.backupStorageLocation: must be a DNS-1123 subdomain/],
      [{ policy: 'x'.repeat(254) }, /^spec\.policy: must be at most 253 characters long$/],
      [{ expire: '0s' }, /^spec\.expire: must be longer than 0/],
      [{ expire: '30d' }, /^spec\.expire: must be a duration such as '30s'/],
      [{ operationTimeout: '0h0m' }, /^spec\.operationTimeout: must be longer than 0/],
      [{ operationTimeout: 'soon' }, /^spec\.operationTimeout: must be a duration/],
      [{ cancel: 'yes' }, /^spec\.cancel: must be true or false$/],
      [{ dataUpload: undefined }, /^spec\.dataUpload: is required$/],
    ] as const)
      await readsOnly(w, () => denied(w, create(dataCopy(spec as Partial<DataCopy['spec']>)), pattern));
  });

  it('keeps the spec as created but for cancel, which cannot be unset', async () => {
    const w = copyWorld();
    const old = dataCopy();
    const update = (spec: Partial<DataCopy['spec']>, from = old): AdmissionReview =>
      review('UPDATE', dataCopy(spec), { old: from });
    await readsOnly(w, async () => {
      await denied(w, update({ dataUpload: 'other' }), /^spec\.dataUpload: cannot change after creation/);
      await denied(w, update({ backupStorageLocation: 'everywhere' }), /^spec\.backupStorageLocation: cannot change/);
      await denied(w, update({ expire: '1h' }), /^spec\.expire: cannot change after creation/);
      await denied(
        w,
        update({ cancel: false }, dataCopy({ cancel: true })),
        /^spec\.cancel: cannot be unset once set$/,
      );
      await denied(w, update({}, dataCopy({ cancel: true })), /^spec\.cancel: cannot be unset once set$/);
    });
    await allowed(w, update({ cancel: true }));
    // once created, the destination is not asked again: it may have changed its mind since
    await allowed(
      w,
      review('UPDATE', dataCopy({ backupStorageLocation: 'site-c', cancel: true }), {
        old: dataCopy({ backupStorageLocation: 'site-c' }),
      }),
    );
  });

  it('keeps a final phase final and a status valid', async () => {
    const w = copyWorld();
    const done = dataCopy({}, { phase: 'Completed', snapshotID: 'b'.repeat(64) });
    const status = (next: DataCopy['status'], old = done): AdmissionReview =>
      review('UPDATE', dataCopy({}, next), { old, subResource: 'status' });
    await denied(w, status({ phase: 'InProgress' }), /^status\.phase: cannot change from Completed, which is final/);
    await denied(w, status({ phase: 'Done' as never }, dataCopy()), /^status\.phase: must be one of New, InProgress/);
    await denied(
      w,
      status({ phase: 'InProgress', attempts: -1 }, dataCopy()),
      /^status\.attempts: must be at least 0$/,
    );
    await allowed(w, status({ phase: 'InProgress', attempts: 2, nextAttemptTime: '2025-01-01T00:01:00Z' }, dataCopy()));
  });

  it('refuses a review whose object is not a DataCopy at all, and never refuses a deletion', async () => {
    const w = copyWorld();
    const forged = create(dataCopy());
    forged.request!.object = ['not', 'an', 'object'];
    await denied(w, forged, /^the DataCopy is not a JSON object$/);
    const a = await answer(w, review('DELETE', undefined, { old: dataCopy() }));
    assert.equal(a.allowed, true);
    assert.deepEqual(a.warnings, undefined, 'the dispatcher validates DataCopies');
  });
});

describe('CopyPolicy admission', () => {
  it("admits a policy in ferry's namespace whose namespaces and schedules the destination takes", async () => {
    const w = copyWorld();
    await allowed(
      w,
      create(
        policy({ namespaces: ['app', 'b'], schedules: ['nightly', 'app/hourly'], expire: '2160h', suspend: true }),
      ),
    );
    await allowed(w, create(policy({ destinationLocation: 'everywhere', namespaces: ['app', 'anything'] })));
  });

  it("refuses a policy outside ferry's namespace", async () => {
    const w = copyWorld();
    await readsOnly(w, () =>
      denied(
        w,
        create(policy({}, 'app')),
        /^metadata\.namespace: a CopyPolicy lives in ferry's namespace ferry-system/,
        403,
      ),
    );
  });

  it('refuses a namespace the destination does not take, naming the entry and the rule', async () => {
    const w = copyWorld();
    await readsOnly(w, () =>
      denied(
        w,
        create(policy({ namespaces: ['app', 'other'] })),
        /^spec\.namespaces\[1\]: location "site-b" allows namespaces \[app, b\], not "other"$/,
        403,
      ),
    );
  });

  it('refuses a copy into its own source, missing locations and a read-only destination', async () => {
    const w = copyWorld();
    await readsOnly(w, async () => {
      await denied(
        w,
        create(policy({ destinationLocation: 'default' })),
        /^spec\.destinationLocation: must differ from spec\.sourceLocation \("default"\)/,
      );
      await denied(
        w,
        create(policy({ sourceLocation: 'gone' })),
        /^spec\.sourceLocation: BackupStorageLocation "gone" does not exist/,
      );
      await denied(
        w,
        create(policy({ destinationLocation: 'gone' })),
        /^spec\.destinationLocation: BackupStorageLocation "gone" does not exist/,
      );
      await denied(
        w,
        create(policy({ destinationLocation: 'recovery' })),
        /^spec\.destinationLocation: location "recovery" has spec\.recoverVersions set/,
      );
    });
  });

  it('takes schedule names and durations up to their limits and refuses them past, naming the entry', async () => {
    const w = copyWorld();
    const ns63 = 'n'.repeat(63);
    await allowed(w, create(policy({ schedules: [`${ns63}/${'s'.repeat(253)}`, 's'.repeat(253)], expire: '1ms' })));
    for (const [spec, pattern] of [
      [
        { schedules: [`${'n'.repeat(64)}/nightly`] },
        /^spec\.schedules\[0\]: the namespace "n{64}" must be at most 63 characters long$/,
      ],
      [
        { schedules: ['ok', 's'.repeat(254)] },
        /^spec\.schedules\[1\]: the schedule name must be at most 253 characters long$/,
      ],
      [{ schedules: ['app/Nightly'] }, /^spec\.schedules\[0\]: must be "name" or "namespace\/name"/],
      [{ schedules: ['a/b/c'] }, /^spec\.schedules\[0\]: must be "name" or "namespace\/name"/],
      [{ schedules: ['/nightly'] }, /^spec\.schedules\[0\]: must be "name" or "namespace\/name"/],
      [{ schedules: ['nightly', 'nightly'] }, /^spec\.schedules: must not repeat an item/],
      [{ namespaces: ['App'] }, /^spec\.namespaces\[0\]: must be a DNS-1123 label/],
      [{ namespaces: ['*'] }, /^spec\.namespaces\[0\]: must be a DNS-1123 label/],
      [{ expire: '0s' }, /^spec\.expire: must be longer than 0/],
      [{ expire: '90d' }, /^spec\.expire: must be a duration such as '30s'/],
      [
        { selector: { matchExpressions: [{ key: 'tier', operator: 'In' }] } },
        /^spec\.selector\.matchExpressions\[0\]\.values: must not be empty for In/,
      ],
      [{ destinationLocation: undefined }, /^spec\.destinationLocation: is required$/],
    ] as const)
      await readsOnly(w, () => denied(w, create(policy(spec as Partial<CopyPolicy['spec']>)), pattern));
  });

  it('checks every new spec again, and lets a change that leaves the spec alone through', async () => {
    const w = copyWorld();
    const old = policy({ namespaces: ['app'] });
    await denied(
      w,
      review('UPDATE', policy({ namespaces: ['app', 'other'] }), { old }),
      /^spec\.namespaces\[1\]: location "site-b" allows namespaces \[app, b\], not "other"$/,
      403,
    );
    await w.kube.delete({ kind: 'BackupStorageLocation', namespace: ferryNamespace, name: 'site-b' });
    const labelled = { ...policy({ namespaces: ['app'] }), metadata: { ...old.metadata, labels: { team: 'ops' } } };
    await allowed(w, review('UPDATE', labelled, { old }));
    await denied(
      w,
      review(
        'UPDATE',
        { ...policy({ namespaces: ['app'] }), status: { copiesCompleted: -1 } },
        { old, subResource: 'status' },
      ),
      /^status\.copiesCompleted: must be at least 0$/,
    );
  });
});
