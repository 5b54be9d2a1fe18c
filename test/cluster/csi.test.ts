// The box's CSI driver (internal/csi, the ferry-csi binary) against the CSI sanity suite of csi-test, with
// filesystem and then block volumes, and the driver's own Go tests: block publish through loop devices, read-only
// publish, snapshots, clones and static snapshot handles, the snapshot-ready delay, group snapshots, the
// SnapshotMetadata service's allocated and changed blocks of a sparse block volume, and kubelet plugin registration.
// They talk to the driver over its real unix socket, mount for real and attach loop devices, so they need root,
// as the box does; no box is started.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { it } from 'node:test';
import { goEnv } from './build.ts';
import { moduleDir } from './paths.ts';

function goTest(pkg: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // -trimpath as the box's build uses it, so the Kubernetes packages come from the same Go build cache
    const child = spawn('go', ['test', '-trimpath', '-count=1', '-v', pkg], {
      cwd: moduleDir,
      env: goEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => {
      output += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      output += b.toString();
    });
    child.on('error', (e) =>
      reject(new Error(`Cannot run go (is Go installed in /usr/local/go or on PATH?): ${e.message}`)),
    );
    child.on('exit', (code) => resolve({ code, output }));
  });
}

const driverTests = [
  'TestSanity',
  'TestBlockPublishWritesReachTheImageAndUnpublishDetaches',
  'TestReadOnlyPublishRefusesWrites',
  'TestPublishChecksModeAndNode',
  'TestVolumesFromASnapshotAndFromAVolume',
  'TestBlockCloneKeepsTheBytesAndGrows',
  'TestSnapshotReadyDelay',
  'TestStaticSnapshotByHandle',
  'TestGroupSnapshot',
  'TestSnapshotMetadataOfASparseBlockVolume',
  'TestRegistrationAnswersTheKubelet',
];

it(
  'the CSI driver passes the CSI sanity suite (filesystem and block volumes) and its own tests',
  { timeout: 30 * 60_000 },
  async () => {
    const { code, output } = await goTest('./internal/csi/');
    const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
    assert.equal(code, 0, `go test ./internal/csi/ failed:\n${plain.slice(-20_000)}`);
    for (const name of driverTests)
      assert.match(plain, new RegExp(`--- PASS: ${name} `), `${name} did not run and pass`);
    // one summary for the block run (re-executed by TestSanity), one for the filesystem run
    const summaries = [...plain.matchAll(/SUCCESS! -- (\d+) Passed \| 0 Failed/g)].map((m) => Number(m[1]));
    assert.equal(summaries.length, 2, `want the sanity summaries of two runs:\n${plain.slice(-5000)}`);
    for (const passed of summaries) assert.ok(passed >= 60, `only ${passed} sanity specs passed`);
  },
);
