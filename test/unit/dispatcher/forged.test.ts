// Reviews nobody stored: whatever a review carries (an object, an old object, a uid, a namespace), the dispatcher
// acts only on what it reads back from the cluster, so a forged review writes nothing, creates nothing and deletes
// nothing; and the volume a transfer Job mounts is the one the expose step made, whatever status.exposure says.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import yaml from 'js-yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import type { Resource } from '../../../src/shared/dispatch/status.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import { jobName, labels } from '../../../src/shared/step-job/contract.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { exposureName } from '../../../src/shared/step-job/names.ts';
import { claim, download, ferryNamespace, jobs, location, review, upload, world } from './world.ts';
import type { World } from './world.ts';
import { nightlySchedule } from '../../support/backup-schedule.ts';

type Review = ReturnType<typeof review>;

async function allowed(w: World, body: AdmissionReview): Promise<void> {
  const result = await handleReview(body, w.handler);
  assert.equal(result.status, 200);
  assert.equal((result as { review: AdmissionReview }).review.response?.allowed, true);
}

/** Sends the reviews, lets every follow-up run out, and returns what the dispatcher asked of the cluster beyond reading. */
async function writesAfter(w: World, reviews: Review[]): Promise<string[]> {
  const from = w.kube.actions.length;
  // allowed or denied: either way, only the cluster decides what happens next
  for (const r of reviews) assert.equal((await handleReview(r, w.handler)).status, 200);
  await w.settle();
  return w.kube.actions
    .slice(from)
    .filter((a) => a.verb !== 'get' && a.verb !== 'list')
    .map((a) => `${a.verb} ${a.kind} ${a.namespace ?? ''}/${a.name ?? ''}`);
}

function stored(w: World, r: Resource): Resource {
  w.kube.seed(r);
  return w.kube.peek<Resource>({ kind: r.kind, namespace: r.metadata.namespace!, name: r.metadata.name })!;
}

function withUid<T extends Resource>(r: T, uid: string, namespace = r.metadata.namespace): T {
  return { ...r, metadata: { ...r.metadata, uid, namespace } };
}

const schedulesTemplate = yaml.load(
  readFileSync(join(import.meta.dirname, '..', '..', '..', 'jobs', 'schedule.yaml'), 'utf8'),
) as KubeObject;

function schedule(annotations?: Record<string, string>): KubeObject {
  return nightlySchedule({ schedule: '0 2 * * *' }, annotations ? { annotations } : {});
}

function scheduleReview(
  operation: 'CREATE' | 'UPDATE' | 'DELETE',
  object: KubeObject | null,
  old?: KubeObject,
): Review {
  const r = review(operation, object, { old });
  r.request!.kind.kind = 'BackupSchedule';
  r.request!.resource.resource = 'backupschedules';
  return r;
}

describe('a forged review changes nothing in the cluster', () => {
  it('a DataUpload or DataDownload created with a uid nothing stored has: no Job, however many', async () => {
    const w = world();
    const forged = [
      ...Array.from({ length: 40 }, (_, i) => review('CREATE', withUid(upload(`ghost-${i}`), randomUUID()))),
      review('CREATE', withUid(download('ghost'), randomUUID())),
    ];
    assert.deepEqual(await writesAfter(w, forged), []);
  });

  it('a creation review naming a stored resource with another uid, or in another namespace: no Job', async () => {
    const w = world();
    const real = stored(w, upload('real', 'Completed'));
    const other = withUid(upload('real'), randomUUID());
    const elsewhere = withUid(upload('real'), real.metadata.uid!, 'other');
    assert.deepEqual(
      await writesAfter(w, [review('CREATE', other), review('CREATE', elsewhere), review('CREATE', real)]),
      [],
    );
  });

  it('status updates the apiserver never stored (new phase, exposure, cancel, deletion): no Job, no status write', async () => {
    const w = world();
    const victim = claim(ferryNamespace, 'victim');
    w.kube.seed(victim);
    const up = stored(w, upload('up', 'Accepted'));
    const down = stored(w, download('down', 'New'));
    const forged: Review[] = [];
    for (const r of [up, down]) {
      for (const phase of ['Accepted', 'Prepared', 'InProgress', 'Finalizing', 'Canceling'] as const) {
        const status = { phase, exposure: { namespace: ferryNamespace, pvc: 'victim' } };
        forged.push(review('UPDATE', { ...r, status }, { old: r, subResource: 'status' }));
      }
      forged.push(review('UPDATE', { ...r, spec: { ...r.spec, cancel: true } }, { old: r }));
      const finalized = {
        ...r,
        metadata: { ...r.metadata, finalizers: ['ferry.dev/delete-repository-data'] },
        status: { phase: 'Completed' },
      };
      forged.push(review('DELETE', null, { old: finalized }));
      // the same changes in another namespace, and with a uid of nothing stored
      forged.push(
        review('UPDATE', withUid({ ...r, status: { phase: 'Prepared' } } as Resource, r.metadata.uid!, 'stranger'), {
          old: r,
          subResource: 'status',
        }),
      );
      forged.push(
        review('UPDATE', withUid({ ...r, status: { phase: 'Prepared' } } as Resource, randomUUID()), {
          old: r,
          subResource: 'status',
        }),
      );
    }
    assert.deepEqual(await writesAfter(w, forged), []);
    assert.equal(
      w.kube.peek<Resource>({ kind: 'DataUpload', namespace: 'app', name: 'up' })?.status?.phase,
      'Accepted',
    );
  });

  it('a BackupSchedule deletion carrying ferry.dev/delete-backups in oldObject deletes no DataUpload while the schedule stays', async () => {
    const w = world();
    w.kube.seed(schedulesTemplate);
    const backup = upload('nightly-data-202501010000', 'Completed');
    backup.metadata.labels = { 'ferry.dev/schedule': 'nightly' };
    w.kube.seed(backup);
    const annotated = schedule({ 'ferry.dev/delete-backups': 'true' });
    // the stored schedule without the annotation, then with it: a deletion the apiserver does not make deletes nothing
    w.kube.seed(schedule());
    assert.deepEqual(await writesAfter(w, [scheduleReview('DELETE', null, annotated)]), []);
    w.kube.seed(annotated);
    assert.deepEqual(
      await writesAfter(w, [
        scheduleReview('DELETE', null, annotated),
        scheduleReview(
          'UPDATE',
          { ...annotated, metadata: { ...annotated.metadata, deletionTimestamp: '2025-01-01T00:00:00Z' } },
          annotated,
        ),
      ]),
      [],
    );
    assert.equal(w.kube.all('DataUpload').length, 1);
    // another uid under the same name: not the schedule the review names
    assert.deepEqual(
      await writesAfter(w, [
        scheduleReview('DELETE', null, { ...annotated, metadata: { ...annotated.metadata, uid: randomUUID() } }),
      ]),
      [],
    );
  });

  it('schedules and locations with new generations or uids nothing stored: no reconcile Job', async () => {
    const w = world();
    w.kube.seed(
      schedulesTemplate,
      yaml.load(
        readFileSync(join(import.meta.dirname, '..', '..', '..', 'jobs', 'maintenance-reconcile.yaml'), 'utf8'),
      ) as KubeObject,
    );
    const s = schedule();
    w.kube.seed({ ...s, status: { observedGeneration: 1 } });
    const loc = w.kube.peek<KubeObject>({ kind: 'BackupStorageLocation', namespace: ferryNamespace, name: 'default' })!;
    const locationReview = (operation: 'CREATE' | 'UPDATE', object: KubeObject, old?: KubeObject): Review => {
      const r = review(operation, object, { old });
      r.request!.kind.kind = 'BackupStorageLocation';
      r.request!.resource.resource = 'backupstoragelocations';
      return r;
    };
    const forged: Review[] = [];
    for (let i = 0; i < 20; i++) {
      forged.push(scheduleReview('CREATE', { ...s, metadata: { ...s.metadata, name: `s${i}`, uid: randomUUID() } }));
      forged.push(
        locationReview('CREATE', {
          ...location(`l${i}`),
          metadata: { ...location(`l${i}`).metadata, uid: randomUUID(), generation: 1 },
        }),
      );
    }
    forged.push(scheduleReview('UPDATE', { ...s, metadata: { ...s.metadata, generation: 9 } }, s));
    forged.push(locationReview('UPDATE', { ...loc, metadata: { ...loc.metadata, generation: 9 } }, loc));
    assert.deepEqual(await writesAfter(w, forged), []);
  });
});

describe('the transfer Job mounts what the expose step made', () => {
  it('the claim named after the uid and labelled with it, never the one status.exposure names', async () => {
    const w = world();
    w.kube.seed(claim(ferryNamespace, 'victim'), claim('app', 'data'));
    const r = stored(w, upload('up', 'Accepted'));
    const made = claim(ferryNamespace, exposureName(r));
    made.metadata.labels = { [labels.uid]: r.metadata.uid! };
    w.kube.seed(made);
    const next = { ...r, status: { phase: 'Prepared', exposure: { namespace: 'app', pvc: 'data' } } } as Resource;
    await allowed(w, review('UPDATE', next, { old: r, subResource: 'status' }));
    await w.kube.replaceStatus(next);
    await w.settle();
    const job = w.kube.peek<KubeObject>({
      kind: 'Job',
      namespace: ferryNamespace,
      name: jobName('DataUpload', r.metadata.uid!, 'transfer', 1),
    }) as any;
    assert.deepEqual(
      job.spec.template.spec.volumes
        .filter((v: any) => v.persistentVolumeClaim)
        .map((v: any) => v.persistentVolumeClaim),
      [{ claimName: exposureName(r), readOnly: true }],
    );
  });

  it('no volume at all when the claim of that name is not labelled with the uid (the transfer then fails saying so)', async () => {
    const w = world();
    const r = stored(w, download('down', 'New'));
    // a claim someone made under the derived name, for another resource
    const planted = claim(ferryNamespace, exposureName(r));
    planted.metadata.labels = { [labels.uid]: randomUUID() };
    w.kube.seed(planted);
    const next = {
      ...r,
      status: { phase: 'Prepared', exposure: { namespace: ferryNamespace, pvc: exposureName(r) } },
    } as Resource;
    await allowed(w, review('UPDATE', next, { old: r, subResource: 'status' }));
    await w.kube.replaceStatus(next);
    await w.settle();
    const [job] = jobs(w.kube) as any[];
    assert.equal(job.metadata.labels[labels.step], 'transfer');
    assert.equal(
      (job.spec.template.spec.volumes ?? []).some((v: any) => v.persistentVolumeClaim),
      false,
    );
  });
});
