// The dispatcher starts the maintenance reconcile when a storage location is created or its spec changes, as the
// apiserver stores it: one Job per (uid, generation) from the real ferry-maintenance-reconcile template, none on a
// dry run, a status write, a metadata-only change, a deletion or a review whose change is never stored, and the
// location is allowed even when the Job cannot be made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import { locationReconcileJobName } from '../../../src/dispatcher/location.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { ferryNamespace, jobs, location, review, world, type World } from '../dispatcher/world.ts';

const template = yaml.load(
  readFileSync(join(import.meta.dirname, '..', '..', '..', 'jobs', 'maintenance-reconcile.yaml'), 'utf8'),
) as KubeObject;
const uid = '5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';

function stored(generation: number, spec: Record<string, unknown> = {}): KubeObject {
  const l = location('fresh', ['*']);
  return {
    ...l,
    metadata: { ...l.metadata, uid, generation },
    spec: { ...(l.spec as Record<string, unknown>), ...spec },
  };
}

function locationReview(
  operation: 'CREATE' | 'UPDATE' | 'DELETE',
  object: KubeObject | null,
  opts: Parameters<typeof review>[2] = {},
): AdmissionReview {
  const r = review(operation, object, opts);
  r.request!.kind.kind = 'BackupStorageLocation';
  r.request!.resource.resource = 'backupstoragelocations';
  return r;
}

async function allowed(w: World, body: AdmissionReview): Promise<void> {
  const result = await handleReview(body, w.handler);
  assert.equal(result.status, 200);
  const response = (result as { review: AdmissionReview }).review.response!;
  assert.equal(response.allowed, true, response.status?.message);
  assert.equal(response.warnings, undefined, 'the dispatcher answers for locations');
}

function setup(): World {
  const w = world();
  w.kube.seed(template);
  return w;
}

test('creating a location starts one reconcile Job from the template, named after its uid and generation', async () => {
  const w = setup();
  await allowed(w, locationReview('CREATE', stored(1)));
  await allowed(w, locationReview('CREATE', stored(1)));
  w.kube.seed(stored(1));
  await w.settle();
  const made = jobs(w.kube);
  assert.deepEqual(
    made.map((j) => j.metadata.name),
    [locationReconcileJobName(uid, 1)],
  );
  assert.equal(made[0].metadata.name, 'ferry-maint-reconcile-5f0c1a2b3c4d4e5f-g1');
  assert.equal(made[0].metadata.namespace, ferryNamespace);
  assert.equal(made[0].metadata.annotations?.['ferry.dev/location'], 'fresh');
  const want = (template.spec as { jobTemplate: { spec: unknown } }).jobTemplate.spec;
  assert.deepEqual(made[0].spec, want, "the pod is the template's (reconcile account, `maintenance --reconcile`)");
});

test('a new generation starts another; a metadata-only change, a status write, a dry run and a deletion start none', async () => {
  const w = setup();
  await allowed(w, locationReview('CREATE', stored(1), { dryRun: true }));
  await w.settle();
  assert.equal(jobs(w.kube).length, 0, 'a dry run has no side effects');
  await allowed(w, locationReview('CREATE', stored(1)));
  w.kube.seed(stored(1));
  const relabelled = stored(1);
  relabelled.metadata.labels = { team: 'a' };
  await allowed(w, locationReview('UPDATE', relabelled, { old: stored(1) }));
  await w.kube.replace(relabelled);
  await allowed(w, locationReview('UPDATE', stored(1), { old: stored(1), subResource: 'status' }));
  await w.settle();
  assert.equal(jobs(w.kube).length, 1);
  // a review of a new generation the apiserver never stores starts nothing
  await allowed(w, locationReview('UPDATE', stored(7), { old: stored(1) }));
  await w.settle();
  assert.equal(jobs(w.kube).length, 1);
  const changed = stored(2, { maintenance: { prune: { schedule: '0 2 * * *' } } });
  await allowed(w, locationReview('UPDATE', changed, { old: stored(1) }));
  await w.kube.replace(changed);
  await allowed(w, locationReview('UPDATE', stored(2), { old: stored(2), dryRun: true }));
  await w.settle();
  await allowed(w, locationReview('DELETE', null, { old: changed }));
  await w.kube.delete({ kind: 'BackupStorageLocation', namespace: ferryNamespace, name: 'fresh' });
  await w.settle();
  assert.deepEqual(
    jobs(w.kube)
      .map((j) => j.metadata.name)
      .sort(),
    [locationReconcileJobName(uid, 1), locationReconcileJobName(uid, 2)],
  );
});

test('without the template the location is still allowed, and the log says the periodic reconcile will act', async () => {
  const w = world();
  await allowed(w, locationReview('CREATE', stored(1)));
  w.kube.seed(stored(1));
  await w.settle();
  assert.equal(jobs(w.kube).length, 0);
  assert.ok(
    w.logs.some(
      (l) =>
        l.includes('the periodic maintenance reconcile will') &&
        l.includes('ferry-maintenance-reconcile does not exist'),
    ),
    w.logs.join('\n'),
  );
});
