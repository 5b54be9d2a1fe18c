// The arithmetic and parsing the benchmark's conclusions rest on: medians, ratios, target verdicts, GNU time's
// output and MinIO's metrics.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { parseTimeLine } from '../measure/child.ts';
import { imageSize } from '../measure/fresh-fs.ts';
import { metricsToken, parseRequestCounts } from '../measure/minio-metrics.ts';
import { checkTargets, openingCosts, restoresWentTo, type Check } from '../report/markdown.ts';
import { median, summarize } from '../report/summarize.ts';
import { restoreChecks } from '../report/restore-targets.ts';
import type { OpResult } from '../scenario.ts';

test('median of odd and even counts, none for an empty list', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([]), undefined);
});

function result(peer: string, rep: number, wallSeconds: number, extra: Partial<OpResult> = {}): OpResult {
  return {
    dataset: 'A-x',
    datasetID: 'A',
    op: 'backup',
    peer,
    target: 'local',
    rep,
    ok: true,
    wallSeconds,
    throughput: 100 / wallSeconds,
    ...extra,
  };
}

test('summaries take medians over the successful repetitions and time ratios against ferry', () => {
  const s = summarize([
    result('ferry', 1, 2),
    result('ferry', 2, 4),
    result('ferry', 3, 3),
    result('restic', 1, 9),
    result('restic', 2, 6),
    result('restic', 3, 100, { ok: false }),
  ]);
  const ferry = s.find((x) => x.peer === 'ferry')!;
  const restic = s.find((x) => x.peer === 'restic')!;
  assert.equal(ferry.wallSeconds, 3);
  assert.equal(restic.wallSeconds, 7.5);
  assert.equal(restic.failed, 1);
  assert.equal(restic.ferrySpeedup, 2.5);
  assert.equal(ferry.ferrySpeedup, undefined);
});

test('target verdicts follow the issue: 1.5x restic on full backup, half its time unchanged, RSS under 256 MiB', () => {
  const results: OpResult[] = [
    result('ferry', 1, 2),
    result('restic', 1, 2.9),
    result('kopia', 1, 3),
    { ...result('ferry', 1, 1), op: 'backup-unchanged' },
    { ...result('restic', 1, 2), op: 'backup-unchanged' },
    { ...result('ferry', 1, 1), datasetID: 'B', dataset: 'B-x', maxRssBytes: 300 * 2 ** 20 },
  ];
  const checks = checkTargets(summarize(results), undefined);
  const verdict = (goal: string): boolean | undefined => checks.find((c) => c.goal.startsWith(goal))!.met;
  assert.equal(verdict('A full backup: >= 1.5x restic'), false);
  assert.equal(verdict('A full backup: faster than kopia'), true);
  assert.equal(verdict('A unchanged incremental'), true);
  assert.equal(verdict('A restore'), undefined);
  assert.equal(checks.find((c) => c.goal.startsWith('A restore'))!.measured, '-', 'no ratio without the peer');
  assert.equal(
    checkTargets(summarize(results.slice(0, 5)), undefined).find((c) => c.goal.startsWith('B backup'))!.measured,
    '-',
    'no B run',
  );
  assert.equal(verdict('B backup'), false);
  // the B row names only the peers that ran
  assert.equal(checks.find((c) => c.goal.startsWith('B backup'))!.measured, '300 MiB');
});

test('the cost of opening a repository is reported, and the incremental ratios with it taken out of both peers', () => {
  const op = (o: OpResult['op'], peer: string, wallSeconds: number): OpResult => ({
    ...result(peer, 1, wallSeconds),
    op: o,
  });
  const results = [
    op('snapshots', 'ferry', 0.2),
    op('snapshots', 'restic', 0.7),
    op('backup-unchanged', 'ferry', 0.5),
    op('backup-unchanged', 'restic', 1.0),
    op('backup-1pct-changed', 'ferry', 0.6),
    op('backup-1pct-changed', 'restic', 1.0),
  ];
  assert.deepEqual(openingCosts(summarize(results)), [
    '- local: listing the snapshots took ferry 0.20 s, restic 0.70 s. Without it, restic time / ferry time: nothing changed 1.00x, 1% changed 0.75x.',
  ]);
  assert.deepEqual(openingCosts(summarize(results.filter((r) => r.peer === 'ferry'))), [
    '- local: listing the snapshots took ferry 0.20 s.',
  ]);
  assert.deepEqual(
    openingCosts(summarize(results.filter((r) => r.op !== 'snapshots'))),
    [],
    'nothing said when it was not measured',
  );
});

test('the method says where the restores wrote', () => {
  const restore = (restoredOn?: OpResult['restoredOn']): OpResult => ({
    ...result('ferry', 1, 2),
    op: 'restore',
    restoredOn,
  });
  assert.match(restoresWentTo([restore('fresh ext4'), restore('fresh ext4')]), /fresh ext4 filesystem of its own/);
  assert.match(restoresWentTo([restore('work folder')]), /folder of the work filesystem/);
  assert.match(restoresWentTo([restore('work folder'), restore('fresh ext4')]), /some repetitions/);
  assert.equal(restoresWentTo([result('ferry', 1, 2)]), '', 'no restore, nothing said');
});

test('an image for a restore holds the data, a block per file and a margin, with an inode per file', () => {
  const quickA = imageSize(275 * 2 ** 20, 10_040);
  assert.ok(
    quickA.bytes >= 1.25 * (275 * 2 ** 20 + 10_040 * 4096) && quickA.bytes % 2 ** 30 === 0,
    String(quickA.bytes),
  );
  const fullB = imageSize(100e6, 1_000_000);
  assert.ok(fullB.bytes >= 1_000_000 * 4096 && fullB.inodes >= 1_100_000, JSON.stringify(fullB));
});

test('GNU time line: user, sys and max RSS (KiB) after any exit-status line', () => {
  const r = parseTimeLine('Command exited with non-zero status 1\n12.50 3.25 0.75 204800\n');
  assert.deepEqual(r, { userSeconds: 3.25, sysSeconds: 0.75, maxRssBytes: 204800 * 1024 });
  assert.throws(() => parseTimeLine('missing'), /four numbers/);
});

test('MinIO per-bucket request counters are summed by S3 call name', () => {
  const text = [
    '# HELP minio_bucket_api_total Total number of requests for a bucket',
    '# TYPE minio_bucket_api_total counter',
    'minio_bucket_api_total{bucket="b",name="PutObject",server="x",type="s3"} 12',
    'minio_bucket_api_total{bucket="b",name="GetObject",server="x",type="s3"} 3',
    'minio_bucket_api_total{bucket="b",name="PutObject",server="y",type="s3"} 1',
    'minio_bucket_api_traffic_sent_bytes{bucket="b",server="x",type="s3"} 999',
  ].join('\n');
  assert.deepEqual(parseRequestCounts(text, 'minio_bucket_api_total'), {
    total: 16,
    byName: { PutObject: 13, GetObject: 3 },
  });
});

test('the metrics token is an HS512 JWT for the access key, signed with the secret key', () => {
  const token = metricsToken('AKID', 'secret', 1000);
  const [header, claims, signature] = token.split('.');
  assert.deepEqual(JSON.parse(Buffer.from(header, 'base64url').toString()), { alg: 'HS512', typ: 'JWT' });
  assert.deepEqual(JSON.parse(Buffer.from(claims, 'base64url').toString()), {
    exp: 4600,
    sub: 'AKID',
    iss: 'prometheus',
  });
  assert.equal(signature, createHmac('sha512', 'secret').update(`${header}.${claims}`).digest('base64url'));
});

test("issue 34's restore verdicts: A at 1.3x restic and ahead of kopia, E at 1.5x restic with more than a core busy", () => {
  const restore = (d: 'A' | 'E', peer: string, wallSeconds: number, cpuSeconds: number): OpResult => ({
    ...result(peer, 1, wallSeconds),
    dataset: `${d}-x`,
    datasetID: d,
    op: 'restore',
    cpuSeconds,
  });
  const checks = restoreChecks(
    summarize([
      restore('A', 'ferry', 10, 12),
      restore('A', 'restic', 13.5, 14),
      restore('A', 'kopia', 9, 20),
      restore('E', 'ferry', 4, 6),
      restore('E', 'restic', 5, 3),
    ]),
  );
  const verdict = (goal: string): Check => checks.find((c) => c.goal.startsWith(goal))!;
  assert.equal(verdict('A restore: >= 1.3x').met, true);
  assert.equal(verdict('A restore: >= 1.3x').measured, '1.35x');
  assert.equal(verdict('A restore: faster than kopia').met, false);
  assert.equal(verdict('E restore (one large file)').met, false, '1.25x restic is not 1.5x');
  assert.equal(verdict('E restore uses both cores').met, true);
  assert.equal(verdict('E restore uses both cores').measured, '1.50 (6.00 CPU s in 4.00 s; restic 0.60)');
  // not run: no verdict at all, and a dataset without its peer has no ratio
  assert.deepEqual(restoreChecks(summarize([result('ferry', 1, 2)])), []);
  const alone = restoreChecks(summarize([restore('E', 'ferry', 4, 3)]));
  assert.equal(alone.find((c) => c.goal.startsWith('E restore (one'))!.met, undefined);
  assert.equal(alone.find((c) => c.goal.startsWith('E restore uses'))!.met, false);
});
