// The README's test command after formatting and type checks: every suite but the solo one, in one process, so the
// cluster in a box the first cluster suite starts is owned by this process and shared by every suite after it.
//
// Most of the end-to-end time is waiting: for a cron minute, an expiry sweep, a pod to start. The suites that only
// touch their own namespaces, location and resources therefore run two at a time. A suite that stops or forges
// something everyone shares (the dispatcher, a webhook, the apiserver, MinIO), counts cluster-wide metrics or
// events, kills processes by what they are rather than by the resource they serve, or holds a step to a deadline of
// seconds (cancel: Canceled within 10 s) runs alone: every suite in test/e2e not named in `sideBySide` does, so a
// new suite is alone until someone has read it for this.
import { globSync } from 'node:fs';
import { join } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

const root = join(import.meta.dirname, '..');

/** Suites that share nothing but the box and ferry's install; the longest first, so the pairs even out. */
const sideBySide = [
  'app-backup',
  'retention',
  'schedule',
  'crash',
  'block-cbt',
  'maintenance',
  'delete',
  'cli-backup-restore',
  'cli-rerun-cancel',
  'demo',
  'long-names',
  'backup-restore',
  'block',
  'cli-location',
  'cli-readme',
  'dispatcher-steps',
  'step-containers',
  'accounts',
].map((name) => `test/e2e/${name}.test.ts`);

const files = (...patterns: string[]): string[] => patterns.flatMap((p) => globSync(p, { cwd: root }).sort());

const alone = files(
  'test/{unit,interop,faults,cli}/**/*.test.ts',
  'bench/test/*.test.ts',
  'test/image/*.test.ts',
  'test/cluster/*.test.ts',
);
const e2e = files('test/e2e/*.test.ts');
const missing = sideBySide.filter((f) => !e2e.includes(f));
if (missing.length > 0) throw new Error(`test/run.ts names suites that do not exist: ${missing.join(', ')}`);

const lanes: { files: string[]; concurrency: number }[] = [
  { files: alone, concurrency: 1 },
  { files: sideBySide, concurrency: 2 },
  { files: e2e.filter((f) => !sideBySide.includes(f)), concurrency: 1 },
];

let failed = false;
for (const lane of lanes) {
  const stream = run({
    files: lane.files.map((f) => join(root, f)),
    concurrency: lane.concurrency,
    timeout: 30 * 60_000,
  });
  stream.on('test:fail', () => (failed = true));
  await new Promise<void>((resolve, reject) => {
    const out = stream.compose(spec);
    out.pipe(process.stdout, { end: false });
    out.on('end', resolve);
    out.on('error', reject);
  });
}
process.exitCode = failed ? 1 : 0;
