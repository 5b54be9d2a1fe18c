// A copy stopped in the middle: spec.cancel set while data moves ends the DataCopy Canceled with nothing written
// as a snapshot; a pod killed after some packs arrived leaves them for the next attempt, which sends only the rest.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Backend } from '../../../src/engine/backend/backend.ts';
import type { DataCopy } from '../../../src/shared/api/copy.ts';
import type { DataUpload } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { runCopy } from '../../../src/steps/copy/run.ts';
import { gated } from '../../support/gated-backend.ts';
import { startMinio, type Minio } from '../../support/minio.ts';
import { restic, resticJSON } from '../../support/restic.ts';
import { backedUp, dataCopy, location, ns, resticOf, world } from './world.ts';

let minio: Minio;
before(async () => {
  minio = await startMinio();
});
after(() => minio?.destroy());

interface Held {
  /** resolves once the copy's first pack read from the source stands still */
  reached(): Promise<void>;
  /** lets that read (and every later one) go on */
  open(): void;
}

/** The copy's first pack read from `bucket` stands still until the test opens the gate. */
function holdSourceReads(w: ReturnType<typeof world>, bucket: string): Held {
  const real = w.ctx.engine.openBackend;
  let gate: ReturnType<typeof gated> | undefined;
  let opened = false;
  w.ctx.engine = {
    ...w.ctx.engine,
    openBackend: (loc, opts) => {
      const backend = real(loc, opts);
      if (!loc.includes(`/${bucket}/`)) return backend;
      gate = gated(backend);
      if (opened) gate.open();
      return gate.view;
    },
  };
  return {
    async reached() {
      while (!gate) await new Promise((r) => setTimeout(r, 5));
      await gate.reading;
    },
    open() {
      opened = true;
      gate?.open();
    },
  };
}

const getCopy = (w: ReturnType<typeof world>, name: string) =>
  w.kube.get<DataCopy & KubeObject>({ kind: 'DataCopy', namespace: ns, name });

test('spec.cancel set while the copy reads its data: Canceled, no snapshot in the destination', async () => {
  const a = await minio.bucket('cancel-a');
  const b = await minio.bucket('cancel-b');
  const w = world(minio, [...location(minio, 'site-a', a), ...location(minio, 'site-b', b)]);
  await backedUp(w, 'big', 'site-a', { 'big.bin': 1_000_000 });
  const held = holdSourceReads(w, a);
  w.kube.seed(dataCopy('big-b', 'big', 'site-b'));
  const running = runCopy(w.ctx, { namespace: ns, name: 'big-b' });
  await held.reached();
  assert.equal((await getCopy(w, 'big-b'))?.status?.phase, 'InProgress');
  await w.kube.patch({ kind: 'DataCopy', namespace: ns, name: 'big-b' }, { spec: { cancel: true } });
  // the watch's next look at the DataCopy sees the cancel; the held read then returns into an aborted copy
  const patched = w.kube.actions.length;
  const looked = () => w.kube.actions.slice(patched).some((x) => x.verb === 'get' && x.kind === 'DataCopy');
  while (!looked()) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  held.open();
  const outcome = await running;
  assert.equal(outcome.outcome, 'Canceled', outcome.reason);
  const dc = (await getCopy(w, 'big-b'))!;
  assert.equal(dc.status?.phase, 'Canceled');
  assert.equal(dc.status?.snapshotID, undefined);
  const snaps = await resticJSON<unknown[]>(resticOf(minio, 'site-b', b), ['snapshots']);
  assert.equal(snaps.length, 0);
  const du = await w.kube.get<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: ns, name: 'big' });
  assert.equal(du?.status?.phase, 'Completed');
  assert.equal(du?.status?.copies?.[0].phase, 'Canceled');
});

test('a copy killed after a pack arrived resumes without sending that pack again', async () => {
  const a = await minio.bucket('resume-a');
  const b = await minio.bucket('resume-b');
  const w = world(minio, [...location(minio, 'site-a', a), ...location(minio, 'site-b', b)]);
  // random data over three 16 MiB packs
  await backedUp(w, 'large', 'site-a', { 'one.bin': 20_000_000, 'two.bin': 20_000_000 });
  const pod = new AbortController();
  const real = w.ctx.engine.openBackend;
  let packsSaved = 0;
  w.ctx.engine = {
    ...w.ctx.engine,
    openBackend: (loc, opts) => {
      const backend = real(loc, opts);
      if (!loc.includes(`/${b}/`)) return backend;
      return new Proxy(backend, {
        get(target, prop) {
          if (prop === 'save')
            return async (...args: Parameters<Backend['save']>) => {
              await target.save(...args);
              // SIGTERM once the first pack is stored
              if (args[0].type === 'pack' && ++packsSaved === 1) pod.abort(new Error('stopped by SIGTERM'));
            };
          const v = Reflect.get(target, prop) as unknown;
          return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
        },
      });
    },
  };
  w.kube.seed(dataCopy('large-b', 'large', 'site-b'));
  await assert.rejects(runCopy({ ...w.ctx, signal: pod.signal }, { namespace: ns, name: 'large-b' }));
  assert.ok(packsSaved >= 1);
  assert.equal((await getCopy(w, 'large-b'))?.status?.phase, 'InProgress', 'a killed pod leaves the phase');

  w.ctx.settings.attempt = 2;
  const outcome = await runCopy(w.ctx, { namespace: ns, name: 'large-b' });
  assert.equal(outcome.outcome, 'Advanced', outcome.reason);
  const dc = (await getCopy(w, 'large-b'))!;
  assert.equal(dc.status?.attempts, 2);
  // 40 MB of new data in all; the first 16 MiB pack arrived before the kill and is not sent again
  assert.ok(dc.status!.stats!.bytesSent < 40_000_000 - 15_000_000, `bytesSent ${dc.status?.stats?.bytesSent}`);
  assert.ok(dc.status!.stats!.bytesSent > 20_000_000, `bytesSent ${dc.status?.stats?.bytesSent}`);
  await restic(resticOf(minio, 'site-b', b), ['check', '--read-data']);
});

test('an attempt past spec.operationTimeout stops and is retried later; the backup is untouched', async () => {
  const a = await minio.bucket('timeout-a');
  const b = await minio.bucket('timeout-b');
  const w = world(minio, [...location(minio, 'site-a', a), ...location(minio, 'site-b', b)]);
  await backedUp(w, 'slow', 'site-a', { 'slow.bin': 500_000 });
  const held = holdSourceReads(w, a);
  const dc = dataCopy('slow-b', 'slow', 'site-b');
  dc.spec.operationTimeout = '400ms';
  w.kube.seed(dc);
  const running = runCopy(w.ctx, { namespace: ns, name: 'slow-b' });
  // held (or still opening the repositories) well past the timeout, whichever it reached by then
  await new Promise((r) => setTimeout(r, 1500));
  held.open();
  const outcome = await running;
  assert.equal(outcome.outcome, 'Failed');
  const status = (await getCopy(w, 'slow-b'))!.status!;
  assert.equal(status.phase, 'InProgress');
  assert.match(status.message ?? '', /ran longer than spec\.operationTimeout 400ms/);
  assert.ok(status.nextAttemptTime);
  const du = await w.kube.get<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: ns, name: 'slow' });
  assert.equal(du?.status?.phase, 'Completed');
});
