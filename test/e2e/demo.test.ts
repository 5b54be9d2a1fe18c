// `npm run demo` end to end, as a newcomer runs it: a child process on the cluster in a box (started or reused),
// which must exit 0 and print the summary: a completed backup and restore, the repository snapshot, what
// deduplication saved, an identical restored volume, and where to look. --clean leaves the shared box as it was.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { useCluster } from '../support/cluster.ts';

const checkout = join(import.meta.dirname, '..', '..');

function runDemo(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [join(checkout, 'test/cluster/demo/demo.ts'), ...args], {
    cwd: checkout,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: (Date.now() - started) / 1000 }));
  });
}

it(
  'npm run demo backs up, restores and compares on the cluster in a box, and says so',
  { timeout: 40 * 60_000 },
  async (t) => {
    // the box this test run owns (or the running one): the demo reuses it
    const cluster = await useCluster('demo');
    t.after(() => cluster.cleanup());
    const { code, stdout, stderr, seconds } = await runDemo(['--clean']);
    t.diagnostic(`demo: ${seconds.toFixed(0)} s`);
    const all = `${stdout}\n${stderr}`;
    assert.equal(code, 0, all.slice(-4000));
    assert.match(stdout, /^ferry demo: the restored volume matches the original\.$/m);
    assert.match(stdout, /^ {2}source {6}[1-9]\d{3} files, 3 symlinks, [\d.]+ MiB in PVC demo-app-[0-9a-f]{6}\/data$/m);
    assert.match(
      stdout,
      /^ {2}backup {6}DataUpload demo-app-[0-9a-f]{6}\/backup Completed in \d+s \(snapshot \d+s, expose \d+s, transfer \d+s, finalize \d+s\)$/m,
    );
    assert.match(stdout, /^ {2}snapshot {4}[0-9a-f]{64} in s3:http:\/\/[\d.]+:\d+\/\S+$/m);
    assert.match(
      stdout,
      /^ {2}restore {5}DataDownload demo-restore-[0-9a-f]{6}\/restore Completed in \d+s .*, [1-9]\d{3} files into PVC/m,
    );
    assert.match(stdout, /^ {2}identical {3}yes /m);
    // the sample stores one large file twice: deduplication must show
    const dedup = /^ {2}dedup {7}([\d.]+) MiB read, ([\d.]+) MiB new after deduplication/m.exec(stdout);
    assert.ok(dedup && Number(dedup[2]) < Number(dedup[1]) * 0.8, dedup?.[0] ?? stdout);
    assert.match(stdout, /^ {2}export KUBECONFIG=\S+$/m);
    // live progress (the CLI's --wait display): the phase while the transfer ran, and the bytes once it ended
    assert.match(all, /^\[[\dms]+\] InProgress /m);
    assert.match(all, /^\[[\dms]+\] Completed [\d.]+ MiB \/ [\d.]+ MiB \(100%\)/m);
    // --clean: the demo's namespaces are going
    const ns = /demo-app-[0-9a-f]{6}/.exec(stdout)![0];
    const left = await cluster.kube.find(`/api/v1/namespaces/${ns}`);
    assert.ok(!left || left.status?.phase === 'Terminating', `namespace ${ns} is ${left?.status?.phase}`);
  },
);
