// Issue 5, expiry and retention end to end. Expiry: the sweep deletes exactly the DataUploads past spec.expire,
// not one annotated ferry.dev/retain-if-expired, and the delete step frees their data (restic check passes, the
// repository shrinks). Retention: over a back-dated history (DataUploads whose annotation ferry.dev/scheduled-time
// says when their run was due, the time retention files them under), one scheduled run keeps exactly what
// `restic forget --keep-*` keeps for snapshots taken at the same times in the same time zone.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wallClock } from '../../src/shared/schedule/zone.ts';
import { runID } from '../../src/shared/schedule/names.ts';
import { randomBytes } from '../support/repo.ts';
import { restic, resticJSON } from '../support/restic.ts';
import { api, boundClaim, dataUpload, packBytes, uploads, watchUntil, world } from './world.ts';
import type { Obj, World } from './world.ts';

type Site = World & { app: string; other: string };
/** each test has its own namespace and location, so that the two wait side by side */
let expiry: Site;
let thinning: Site;
let volume: string;
const mib = 1024 * 1024;
const minute = 60_000;
const hour = 60 * minute;
const zone = 'Europe/Berlin';
const schedules = (ns: string): string => `${api}/namespaces/${ns}/backupschedules`;

before(
  async () => {
    expiry = await world('retention', ({ app }) => ({ allowedNamespaces: [app] }));
    thinning = await world('retention', ({ app }) => ({ allowedNamespaces: [app] }));
    ({ path: volume } = await boundClaim(expiry.cluster, expiry.app, 'data', '64Mi'));
    await writeFile(join(volume, 'base.bin'), randomBytes(mib, 11));
    const { path } = await boundClaim(thinning.cluster, thinning.app, 'data', '16Mi');
    await writeFile(join(path, 'base.bin'), randomBytes(64 * 1024, 13));
  },
  { timeout: 30 * 60_000 },
);
after(async () => {
  await expiry?.cluster.cleanup();
  await thinning?.cluster.cleanup();
});

async function backup(w: Site, obj: Obj): Promise<Obj> {
  await w.cluster.kube.create(uploads(w.app), obj);
  const { final } = await watchUntil(
    w.cluster,
    `${uploads(w.app)}/${obj.metadata.name}`,
    ['Completed', 'Failed', 'Canceled'],
    15 * minute,
  );
  assert.equal(final.status.phase, 'Completed', `${obj.metadata.name}: ${final.status.message}`);
  return final;
}

async function gone(w: Site, name: string, timeoutMs: number): Promise<void> {
  await w.cluster.kube.waitFor(
    `${uploads(w.app)}?fieldSelector=metadata.name=${name}`,
    `DataUpload ${name} to be gone`,
    (l) => (l.items.length === 0 ? true : undefined),
    timeoutMs,
  );
}

const pad = (n: number): string => String(n).padStart(2, '0');

function localText(ms: number): string {
  const t = wallClock(ms, zone);
  return `${t.year}-${pad(t.month)}-${pad(t.day)} ${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`;
}

describe('expiry and retention', { timeout: 60 * 60_000, concurrency: 2 }, () => {
  it('expiry deletes exactly the expired backup, keeps the retained one, and frees its data', async (t) => {
    const w = expiry;
    const keep = await backup(w, dataUpload('keep', w.location));
    await writeFile(join(volume, 'unique.bin'), randomBytes(3 * mib, 12));
    const expiring = await backup(w, dataUpload('expiring', w.location, { expire: '5m' }));
    await unlink(join(volume, 'unique.bin'));
    const retained = await backup(w, {
      ...dataUpload('retained', w.location, { expire: '1m' }),
      metadata: { name: 'retained', annotations: { 'ferry.dev/retain-if-expired': 'true' } },
    });
    const repo = await w.repository(w.app);
    assert.ok(
      await w.cluster.kube.find(`${uploads(w.app)}/expiring`),
      "the expiring backup outlived the others' backups, so the size before its expiry is measured",
    );
    const before = await packBytes(repo);
    const started = Date.now();
    await gone(w, 'expiring', 12 * minute);
    t.diagnostic(
      `expired DataUpload gone ${((Date.now() - Date.parse(expiring.metadata.creationTimestamp)) / 1000).toFixed(0)} s after creation (expire 5m; the sweep runs every minute); waited ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    const freed = before - (await packBytes(repo));
    await repo.close();
    t.diagnostic(`expiry freed ${freed} bytes of packs (the expired backup's unique file: ${3 * mib} random bytes)`);
    assert.ok(freed >= 2.5 * mib, `freed ${freed} bytes`);
    const left = (await w.cluster.kube.get(uploads(w.app))).items.map((d: Obj) => d.metadata.name).sort();
    assert.deepEqual(
      left,
      ['keep', 'retained'],
      'the retained backup stays although expired; the one without expire stays',
    );
    const ids = (await w.snapshotsOf(w.app)).map((e) => e.id).sort();
    assert.deepEqual(ids, [keep.status.snapshotID, retained.status.snapshotID].sort());
    await w.resticCheck(w.app, true);
  });

  it('a scheduled run applies retention over a back-dated history exactly as restic forget does', async (t) => {
    const w = thinning;
    const scheduleName = 'thinning';
    const anchor = Math.floor(Date.now() / minute) * minute;
    const agesH = [1, 5, 26, 74, 200, 1000, 9000];
    const history = agesH.map((h, i) => ({ name: `hist-${i}`, at: anchor - h * hour }));
    await Promise.all(
      history.map((b) =>
        w.cluster.kube.create(uploads(w.app), {
          ...dataUpload(b.name, w.location),
          metadata: {
            name: b.name,
            labels: { 'ferry.dev/schedule': scheduleName, 'ferry.dev/run': runID(b.at) },
            annotations: { 'ferry.dev/scheduled-time': new Date(b.at).toISOString().replace('.000Z', 'Z') },
          },
        }),
      ),
    );
    for (const b of history) {
      const { final } = await watchUntil(
        w.cluster,
        `${uploads(w.app)}/${b.name}`,
        ['Completed', 'Failed', 'Canceled'],
        20 * minute,
      );
      assert.equal(final.status.phase, 'Completed', `${b.name}: ${final.status.message}`);
    }
    // the run's minute, far enough ahead for the reconcile to make the CronJob first; it fires once a year
    const due = Math.ceil((Date.now() + 4 * minute) / minute) * minute;
    const rules = { keepLast: 1, keepHourly: 1, keepDaily: 2, keepWeekly: 1, keepMonthly: 1 };
    const local = wallClock(due, zone);
    await w.cluster.kube.create(schedules(w.app), {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: scheduleName },
      spec: {
        schedule: `${local.minute} ${local.hour} ${local.day} ${local.month} *`,
        timeZone: zone,
        pvcs: ['data'],
        backupStorageLocation: w.location,
        retention: rules,
      },
    });
    const run = runID(due);
    const status = await w.cluster.kube.waitFor(
      `${schedules(w.app)}/${scheduleName}`,
      'the scheduled run to end',
      (s) => (s.status?.lastRun?.run === run && s.status.lastRun.outcome !== 'Running' ? s.status : undefined),
      25 * minute,
    );
    assert.equal(status.lastRun.outcome, 'Succeeded', status.lastRun.message);
    t.diagnostic(status.lastRun.message);

    // the oracle: restic, on snapshots at the same times, in the same zone, with the same rules
    const dir = await mkdtemp(join(tmpdir(), 'ferry-retention-oracle-'));
    try {
      const repo = { repo: join(dir, 'repo'), env: { TZ: zone } };
      await writeFile(join(dir, 'f'), 'x');
      await restic(repo, ['init']);
      const all = [...history, { name: status.lastRun.pvcs[0].dataUpload as string, at: due }];
      for (const b of all) await restic(repo, ['backup', '--host', 'h', '--time', localText(b.at), join(dir, 'f')]);
      const snaps = await resticJSON<{ id: string; time: string }[]>(repo, ['snapshots']);
      const nameOf = new Map(snaps.map((s) => [s.id, all.find((b) => b.at === Date.parse(s.time))?.name]));
      assert.equal([...nameOf.values()].filter(Boolean).length, all.length, 'restic recorded every time as given');
      const flags = Object.entries(rules).flatMap(([k, n]) => [`--keep-${k.slice(4).toLowerCase()}`, String(n)]);
      const [group] = await resticJSON<{ keep: { id: string }[] }[]>(repo, ['forget', '--dry-run', ...flags]);
      const expected = group.keep.map((s) => nameOf.get(s.id)).sort();
      const deleted = all
        .map((b) => b.name)
        .filter((n) => !expected.includes(n))
        .sort();
      assert.ok(
        deleted.length >= 2,
        `the rules must delete something to prove anything (restic keeps ${expected.join(', ')})`,
      );
      assert.deepEqual([...(status.lastRun.deleted ?? [])].sort(), deleted, 'the run deleted what restic forgets');
      for (const n of deleted) await gone(w, n, 15 * minute);
      const remaining = (
        await w.cluster.kube.get(
          `${uploads(w.app)}?labelSelector=${encodeURIComponent(`ferry.dev/schedule=${scheduleName}`)}`,
        )
      ).items
        .map((d: Obj) => d.metadata.name)
        .sort();
      assert.deepEqual(remaining, expected, 'the DataUploads left are those restic keeps');
      t.diagnostic(`kept ${expected.join(', ')}; deleted ${deleted.join(', ')}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await w.resticCheck(w.app, false);
  });
});
