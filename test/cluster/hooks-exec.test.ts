// AppBackup hooks run their commands through the apiserver's pods/exec, as kubectl exec does: apiserverExec against
// the box's apiserver and real kubelets/containerd. Exit codes and output come back (bounded whatever the command
// prints), a hanging command is killed at its timeout (the container's /proc shows it gone), a container without sh
// (the pause image) runs the argv directly, and a missing pod or container or a token without pods/exec RBAC gives
// the apiserver's message instead of an exception.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { apiserverExec } from '../../src/shared/hooks/apiserver-exec.ts';
import type { ExecRequest, PodExec } from '../../src/shared/hooks/exec.ts';
import { outputLimit } from '../../src/shared/hooks/output.ts';
import { useCluster } from '../support/cluster.ts';
import type { TestCluster } from '../support/cluster.ts';
import { pauseImage } from './node/config.ts';
import { grantServiceAccount, podObject, podsPath, serviceAccountToken, shellContainer } from './testing.ts';

let cluster: TestCluster;
let ns: string;
let exec: PodExec;

before(async () => {
  cluster = await useCluster('hooks-exec');
  ns = await cluster.namespace();
  const { kube } = cluster;
  await kube.create(podsPath(ns), podObject('app', { containers: [shellContainer('main', 'sleep 2147483647')] }));
  // the pause image is one static binary: no sh, no other program
  await kube.create(
    podsPath(ns),
    podObject('bare', { containers: [{ name: 'pause', image: pauseImage, imagePullPolicy: 'IfNotPresent' }] }),
  );
  for (const pod of ['app', 'bare']) {
    await kube.waitFor(
      `${podsPath(ns)}/${pod}`,
      `pod ${ns}/${pod} to run`,
      (p) => (p.status?.phase === 'Running' ? p : undefined),
      90_000,
    );
  }
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  exec = apiserverExec(kc);
});
after(() => cluster.cleanup());

function req(command: string[], extra: Partial<ExecRequest> = {}): ExecRequest {
  return { namespace: ns, pod: 'app', container: 'main', command, timeoutMs: 30_000, ...extra };
}

/** The command lines of every process in the app container, read from its /proc (the image has no ps). */
async function processes(): Promise<string> {
  const result = await exec.exec(
    req(['sh', '-c', 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done']),
  );
  assert.equal(result.exitCode, 0, result.error ?? result.output);
  return result.output;
}

describe('hooks through pods/exec', () => {
  it('gives the exit code, 0 or not, and what the command printed on stdout and stderr', async () => {
    const ok = await exec.exec(req(['sh', '-c', 'echo flushed']));
    assert.deepEqual(ok, { exitCode: 0, timedOut: false, output: 'flushed\n' });
    const failed = await exec.exec(req(['sh', '-c', 'echo "cannot lock tables" >&2; exit 7']));
    assert.deepEqual(failed, { exitCode: 7, timedOut: false, output: 'cannot lock tables\n' });
    const missing = await exec.exec(req(['no-such-program']));
    assert.equal(missing.exitCode, 127, missing.output);
  });

  it('keeps the last 4 KiB of a command printing 1 MiB', async () => {
    const result = await exec.exec(req(['sh', '-c', 'head -c 1048576 /dev/zero | tr "\\0" a; echo; echo the end']));
    assert.equal(result.exitCode, 0, result.error);
    assert.equal(Buffer.byteLength(result.output), outputLimit);
    assert.match(result.output, /^a+\nthe end\n$/);
  });

  it('kills a hanging command and the processes it started at a 2 s timeout', async () => {
    const started = Date.now();
    const result = await exec.exec(
      req(['sh', '-c', 'echo waiting; sleep 3601 & sleep 3600; wait'], { timeoutMs: 2000 }),
    );
    const tookMs = Date.now() - started;
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, undefined);
    assert.equal(result.error, undefined, 'the kill worked');
    assert.equal(result.output, 'waiting\n');
    assert.ok(tookMs >= 2000 && tookMs < 15_000, `took ${tookMs} ms`);
    const left = await processes();
    assert.doesNotMatch(left, /sleep 360/, left);
    assert.match(left, /sleep 2147483647/, 'the container itself still runs');
  });

  it('kills the command when the signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1000);
    const result = await exec.exec(req(['sleep', '3602'], { signal: controller.signal }));
    assert.deepEqual(result, { timedOut: false, output: '', error: 'canceled' });
    assert.doesNotMatch(await processes(), /sleep 3602/);
  });

  it('runs the argv directly in a container without sh, and at the timeout says the process may still run', async () => {
    const bare = { pod: 'bare', container: 'pause' };
    const version = await exec.exec(req(['/pause', '-v'], bare));
    assert.deepEqual(version, { exitCode: 0, timedOut: false, output: 'pause.c 3.10\n' });
    // without -v, pause waits for a signal forever, and without sh ferry cannot send it one
    const started = Date.now();
    const hung = await exec.exec(req(['/pause'], { ...bare, timeoutMs: 2000 }));
    assert.equal(hung.timedOut, true);
    assert.match(hung.output, /Warning: pause should be the first process/);
    assert.match(hung.error ?? '', /may still run/);
    assert.ok(Date.now() - started < 15_000);
  });

  it('reports a missing pod or container with the apiserver message', async () => {
    const gone = await exec.exec(req(['true'], { pod: 'gone' }));
    assert.equal(gone.timedOut, false);
    assert.match(gone.error ?? '', /pods "gone" not found/);
    const nope = await exec.exec(req(['true'], { container: 'nope' }));
    assert.match(nope.error ?? '', /container nope is not valid for pod app/);
  });

  it('reports a token without pods/exec RBAC as forbidden, naming pods/exec', async () => {
    // may read pods, may not exec into them
    await grantServiceAccount(cluster.kube, ns, 'viewer', [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    ]);
    const token = await serviceAccountToken(cluster.kube, ns, 'viewer');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'box', server: cluster.server, caData: Buffer.from(cluster.access.ca).toString('base64') }],
      users: [{ name: 'viewer', token }],
      contexts: [{ name: 'viewer', cluster: 'box', user: 'viewer' }],
      currentContext: 'viewer',
    });
    const result = await apiserverExec(kc).exec(req(['sh', '-c', 'echo should not run']));
    assert.equal(result.exitCode, undefined);
    assert.match(
      result.error ?? '',
      // "create" since the apiserver checks it for WebSocket upgrades (1.31), "get" before
      new RegExp(`system:serviceaccount:${ns}:viewer" cannot (create|get) resource "pods/exec".*\\(HTTP 403\\)`),
    );
  });
});
