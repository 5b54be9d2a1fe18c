// applyRetention against the real restic as the oracle: the same history of snapshots (random, seeded) in a
// repository, `restic forget --dry-run --json` with the same keep rules, the same snapshots kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { FsBackend } from '../../../src/engine/backend/fs.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { forgetSnapshots, listSnapshots, saveSnapshot } from '../../../src/engine/repository/snapshots.ts';
import { newSnapshot } from '../../../src/engine/snapshot/snapshot.ts';
import { applyRetention } from '../../../src/shared/retention/retention.ts';
import type { KeepRules } from '../../../src/shared/retention/retention.ts';
import { offsetAt, wallClock } from '../../../src/shared/schedule/zone.ts';
import { restic, resticJSON } from '../../support/restic.ts';
import { testKDF, testPassword } from '../../support/repo.ts';
import { testSeed } from '../../support/seeded.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-retention-'));
test.after(() => rm(work, { recursive: true, force: true }));
const path = join(work, 'repo');
const source = join(work, 'source');
await mkdir(source);
await writeFile(join(source, 'file'), 'retention oracle\n');
const repo = await Repository.init(new FsBackend(path), testPassword, { kdf: testKDF });

interface ResticSnapshot {
  id: string;
  time: string;
  tree: string;
}

const berlin = 'Europe/Berlin';
// local times restic is given with --time in Berlin: winter, summer, both sides of both DST changes, a year end
const berlinTimes = [
  '2024-01-15 12:00:00',
  '2024-03-31 01:59:00',
  '2024-03-31 03:00:00',
  '2024-10-27 01:30:00',
  '2024-10-27 03:30:00',
  '2024-12-31 23:59:00',
];

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

test('restic (Go) and zone.ts agree on Berlin local time, offset included, across DST changes', async () => {
  for (const time of berlinTimes) {
    await restic({ repo: path, env: { TZ: berlin } }, ['backup', '--host', 'h', '--time', time, source]);
  }
  const snaps = await resticJSON<ResticSnapshot[]>({ repo: path }, ['snapshots']);
  assert.equal(snaps.length, berlinTimes.length);
  for (const sn of snaps) {
    const ms = Date.parse(sn.time);
    const w = wallClock(ms, berlin);
    const shown = `${w.year}-${pad(w.month)}-${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
    assert.ok(
      berlinTimes.includes(shown),
      `${sn.time} is ${shown} in Berlin by zone.ts, which is not one of the times given`,
    );
    const offset = offsetAt(ms, berlin) / 60_000;
    const written = sn.time.match(/([+-])(\d{2}):(\d{2})$/);
    assert.ok(written, `restic wrote ${sn.time} without an offset`);
    assert.equal(offset, (written[1] === '-' ? -1 : 1) * (Number(written[2]) * 60 + Number(written[3])), sn.time);
  }
});

const zones = ['UTC', berlin, 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Chatham'];
const ruleFlags: Record<keyof KeepRules, string> = {
  keepLast: '--keep-last',
  keepHourly: '--keep-hourly',
  keepDaily: '--keep-daily',
  keepWeekly: '--keep-weekly',
  keepMonthly: '--keep-monthly',
  keepYearly: '--keep-yearly',
};

const gap = fc.oneof(
  fc.integer({ min: 60, max: 3600 }),
  fc.integer({ min: 3600, max: 3 * 86_400 }),
  fc.integer({ min: 86_400, max: 45 * 86_400 }),
);
const count = fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined });
const rules = fc
  .record({
    keepLast: count,
    keepHourly: count,
    keepDaily: count,
    keepWeekly: count,
    keepMonthly: count,
    keepYearly: count,
  })
  .filter((r) => Object.values(r).some((n) => (n ?? 0) > 0));
const history = fc.record({
  start: fc.integer({ min: Date.UTC(2022, 0, 1) / 1000, max: Date.UTC(2025, 0, 1) / 1000 }),
  gaps: fc.array(gap, { minLength: 1, maxLength: 40 }),
});

async function resticKeeps(keep: KeepRules): Promise<Set<string>> {
  const flags = Object.entries(keep)
    .filter(([, n]) => (n ?? 0) > 0)
    .flatMap(([name, n]) => [ruleFlags[name as keyof KeepRules], String(n)]);
  const groups = await resticJSON<{ keep: ResticSnapshot[] | null }[]>({ repo: path }, [
    'forget',
    '--dry-run',
    ...flags,
  ]);
  assert.equal(groups.length, 1, 'all snapshots share host and paths, so restic forms one group');
  return new Set((groups[0].keep ?? []).map((s) => s.id));
}

test('applyRetention keeps exactly what restic forget keeps, for random histories, rules and time zones', async () => {
  const [base] = await resticJSON<ResticSnapshot[]>({ repo: path }, ['snapshots', '--latest', '1']);
  assert.ok(base, 'the first test left a snapshot whose tree the synthetic history reuses');
  const seed = testSeed(20261121);
  await fc.assert(
    fc.asyncProperty(history, rules, fc.constantFrom(...zones), async (h, keep, zone) => {
      await forgetSnapshots(
        repo,
        (await listSnapshots(repo)).map((e) => e.id),
      );
      let seconds = h.start;
      const items: { id: string; time: number }[] = [];
      for (const g of h.gaps) {
        seconds += g;
        const ms = seconds * 1000;
        // the snapshot records the zone's offset, as restic does for a backup taken in that zone
        const time = { ns: BigInt(seconds) * 1_000_000_000n, offset: offsetAt(ms, zone) / 1000 };
        const id = await saveSnapshot(repo, newSnapshot(base.tree, time, { hostname: 'h', paths: [source] }));
        items.push({ id, time: ms });
      }
      const ours = new Set(applyRetention(items, keep, zone).keep.map((i) => i.id));
      const theirs = await resticKeeps(keep);
      assert.deepEqual([...ours].sort(), [...theirs].sort(), `zone ${zone}, rules ${JSON.stringify(keep)}`);
    }),
    { seed, numRuns: 40 },
  );
});
