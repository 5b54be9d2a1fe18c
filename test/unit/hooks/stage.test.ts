// runStage over a fake PodExec and in-memory pods: which pods a hook runs in and in what order, when a stage stops,
// what a failure says, and that hostile input (other namespaces' pods, endless output, names at their limits, a
// missing container, a hanging command, a cancel) gives a bounded, explained result instead of an exception.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Hook } from '../../../src/shared/api/app.ts';
import type { ExecRequest, ExecResult, PodExec } from '../../../src/shared/hooks/exec.ts';
import { outputLimit } from '../../../src/shared/hooks/output.ts';
import { runStage, type StageContext } from '../../../src/shared/hooks/stage.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';

const ns = 'app';

function pod(name: string, labels: Record<string, string>, extra: { namespace?: string; phase?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: extra.namespace ?? ns, labels },
    spec: { containers: [{ name: 'db' }, { name: 'sidecar' }] },
    status: { phase: extra.phase ?? 'Running' },
  } satisfies KubeObject;
}

/** Answers by "pod/container first-arg"; records every request. Unlisted commands exit 0 with no output. */
class FakeExec implements PodExec {
  readonly calls: ExecRequest[] = [];
  readonly answers = new Map<string, (req: ExecRequest) => Promise<ExecResult> | ExecResult>();

  async exec(req: ExecRequest): Promise<ExecResult> {
    this.calls.push(req);
    const answer = this.answers.get(`${req.pod}/${req.container} ${req.command[0]}`);
    return answer ? answer(req) : { exitCode: 0, timedOut: false, output: '' };
  }

  where(): string[] {
    return this.calls.map((c) => `${c.command[0]}@${c.pod}/${c.container}`);
  }
}

function hook(name: string, labels: Record<string, string>, extra: Partial<Hook> = {}): Hook {
  return { name, selector: { matchLabels: labels }, command: [name], ...extra };
}

function setup(...pods: KubeObject[]): { ctx: StageContext; exec: FakeExec } {
  const kube = new MemoryKube();
  kube.seed(...pods);
  const exec = new FakeExec();
  let tick = 0;
  const now = () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++));
  return { ctx: { kube, exec, namespace: ns, now }, exec };
}

const failing = (exitCode: number, output: string) => (): ExecResult => ({ exitCode, timedOut: false, output });

describe('runStage', () => {
  it('runs each hook in order, in every Running pod it selects sorted by name, in the first container by default', async () => {
    const { ctx, exec } = setup(
      pod('db-1', { app: 'db' }),
      pod('db-0', { app: 'db' }),
      pod('db-2', { app: 'db' }, { phase: 'Pending' }),
      pod('web-0', { app: 'web' }),
    );
    const { runs, failure } = await runStage(ctx, 'pre', [
      hook('flush', { app: 'db' }),
      hook('pause', { app: 'web' }, { container: 'sidecar' }),
    ]);
    assert.equal(failure, undefined);
    assert.deepEqual(exec.where(), ['flush@db-0/db', 'flush@db-1/db', 'pause@web-0/sidecar']);
    assert.deepEqual(
      runs.map((r) => [r.stage, r.hook, r.pod, r.container, r.outcome, r.exitCode]),
      [
        ['pre', 'flush', 'db-0', 'db', 'Succeeded', 0],
        ['pre', 'flush', 'db-1', 'db', 'Succeeded', 0],
        ['pre', 'pause', 'web-0', 'sidecar', 'Succeeded', 0],
      ],
    );
    assert.deepEqual(
      runs.map((r) => [r.startTime, r.endTime]),
      [
        ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z'],
        ['2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z'],
        ['2026-01-01T00:00:04.000Z', '2026-01-01T00:00:05.000Z'],
      ],
    );
  });

  it('selects with matchExpressions too, and never pods of another namespace or pods being deleted', async () => {
    const gone = pod('db-9', { app: 'db', tier: 'primary' });
    (gone.metadata as KubeObject['metadata']).deletionTimestamp = '2026-01-01T00:00:00Z';
    const { ctx, exec } = setup(
      pod('db-0', { app: 'db', tier: 'primary' }),
      pod('db-1', { app: 'db', tier: 'replica' }),
      pod('db-0', { app: 'db', tier: 'primary' }, { namespace: 'other' }),
      pod('aaa', { app: 'db', tier: 'primary' }, { namespace: 'other' }),
      gone,
    );
    const selector = {
      matchLabels: { app: 'db' },
      matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['primary'] }],
    };
    const { runs } = await runStage(ctx, 'pre', [{ name: 'flush', selector, command: ['flush'] }]);
    assert.deepEqual(exec.where(), ['flush@db-0/db']);
    assert.deepEqual(
      exec.calls.map((c) => c.namespace),
      [ns],
    );
    assert.equal(runs.length, 1);
  });

  it('pre: stops at the first failure of an onError Fail hook, naming hook, pod, exit code and output', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }), pod('db-1', { app: 'db' }));
    exec.answers.set('db-0/db freeze', failing(3, 'starting\nERROR: cannot lock tables\n'));
    const { runs, failure } = await runStage(ctx, 'pre', [hook('freeze', { app: 'db' }), hook('after', { app: 'db' })]);
    assert.deepEqual(exec.where(), ['freeze@db-0/db']);
    assert.deepEqual(
      runs.map((r) => [r.hook, r.pod, r.outcome, r.exitCode, r.output]),
      [['freeze', 'db-0', 'Failed', 3, 'starting\nERROR: cannot lock tables\n']],
    );
    assert.equal(
      failure,
      'pre hook "freeze" failed with exit code 3 in pod db-0/db: starting | ERROR: cannot lock tables',
    );
  });

  it('pre: an onError Continue failure is recorded and the stage goes on without a failure', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }));
    exec.answers.set('db-0/db warm', failing(1, 'cache busy'));
    const { runs, failure } = await runStage(ctx, 'pre', [
      hook('warm', { app: 'db' }, { onError: 'Continue' }),
      hook('freeze', { app: 'db' }),
    ]);
    assert.equal(failure, undefined);
    assert.deepEqual(
      runs.map((r) => [r.hook, r.outcome]),
      [
        ['warm', 'Failed'],
        ['freeze', 'Succeeded'],
      ],
    );
  });

  it('post: runs every hook in every pod whatever fails; failure is the first onError Fail failure', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }), pod('db-1', { app: 'db' }));
    exec.answers.set('db-0/db thaw', failing(2, 'thaw failed'));
    exec.answers.set('db-1/db thaw', failing(4, 'also failed'));
    exec.answers.set('db-0/db resume', failing(5, 'resume failed'));
    const { runs, failure } = await runStage(ctx, 'post', [
      hook('note', { app: 'db' }, { onError: 'Continue', command: ['resume'] }),
      hook('thaw', { app: 'db' }),
      hook('resume', { app: 'db' }),
    ]);
    assert.deepEqual(exec.where(), [
      'resume@db-0/db',
      'resume@db-1/db',
      'thaw@db-0/db',
      'thaw@db-1/db',
      'resume@db-0/db',
      'resume@db-1/db',
    ]);
    assert.deepEqual(
      runs.map((r) => [r.stage, r.hook, r.pod, r.outcome]),
      [
        ['post', 'note', 'db-0', 'Failed'],
        ['post', 'note', 'db-1', 'Succeeded'],
        ['post', 'thaw', 'db-0', 'Failed'],
        ['post', 'thaw', 'db-1', 'Failed'],
        ['post', 'resume', 'db-0', 'Failed'],
        ['post', 'resume', 'db-1', 'Succeeded'],
      ],
    );
    assert.equal(failure, 'post hook "thaw" failed with exit code 2 in pod db-0/db: thaw failed');
  });

  it('a hook no running pod matches fails with "no running pod matches", and onError decides', async () => {
    const { ctx, exec } = setup(
      pod('db-0', { app: 'db' }, { phase: 'Succeeded' }),
      pod('x', { app: 'db' }, { namespace: 'other' }),
    );
    const cont = await runStage(ctx, 'pre', [hook('opt', { app: 'db' }, { onError: 'Continue' })]);
    assert.equal(cont.failure, undefined);
    assert.deepEqual(
      cont.runs.map((r) => [r.hook, r.pod, r.outcome, r.output]),
      [['opt', '', 'Failed', 'no running pod matches its selector']],
    );
    const fail = await runStage(ctx, 'pre', [hook('freeze', { app: 'db' }), hook('never', {})]);
    assert.equal(fail.failure, 'pre hook "freeze" failed: no running pod matches its selector');
    assert.equal(fail.runs.length, 1);
    assert.equal(exec.calls.length, 0);
  });

  it('a container the pod lacks is a failed run naming it and the containers there are', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }));
    const { runs, failure } = await runStage(ctx, 'pre', [hook('freeze', { app: 'db' }, { container: 'postgres' })]);
    assert.equal(exec.calls.length, 0);
    assert.deepEqual(
      runs.map((r) => [r.pod, r.container, r.outcome]),
      [['db-0', 'postgres', 'Failed']],
    );
    assert.equal(
      failure,
      'pre hook "freeze" failed in pod db-0/postgres: pod db-0 has no container "postgres" (it has: db, sidecar)',
    );
  });

  it('passes the hook timeout (default 30 s, 0 meaning the default) and reports a timeout as TimedOut', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }));
    exec.answers.set('db-0/db hang', () => ({ timedOut: true, output: 'waiting for lock\n' }));
    const { runs, failure } = await runStage(ctx, 'post', [
      hook('quick', { app: 'db' }),
      hook('zero', { app: 'db' }, { timeout: '0' }),
      hook('hang', { app: 'db' }, { timeout: '1m30s' }),
    ]);
    assert.deepEqual(
      exec.calls.map((c) => c.timeoutMs),
      [30_000, 30_000, 90_000],
    );
    assert.deepEqual(runs[2], {
      stage: 'post',
      hook: 'hang',
      pod: 'db-0',
      container: 'db',
      outcome: 'TimedOut',
      output: 'waiting for lock\ntimed out after 90 s',
      startTime: runs[2].startTime,
      endTime: runs[2].endTime,
    });
    assert.equal(failure, 'post hook "hang" timed out in pod db-0/db: waiting for lock | timed out after 90 s');
  });

  it('a timeout that is not a duration, or an empty command, fails the hook instead of throwing', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }));
    const { runs, failure } = await runStage(ctx, 'post', [
      hook('bad', { app: 'db' }, { timeout: '10 minutes' }),
      hook('empty', { app: 'db' }, { command: [] }),
    ]);
    assert.equal(exec.calls.length, 0);
    assert.deepEqual(
      runs.map((r) => [r.hook, r.outcome]),
      [
        ['bad', 'Failed'],
        ['empty', 'Failed'],
      ],
    );
    assert.match(failure ?? '', /^post hook "bad" failed: timeout: "10 minutes" is not a duration/);
    assert.match(runs[1].output ?? '', /no command/);
  });

  it('post: a pod list or an exec that throws fails that hook only, and a hook without selector runs nowhere', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }));
    (ctx.kube as MemoryKube).failNext('list', 'Pod', new Error('etcdserver: request timed out'));
    exec.answers.set('db-0/db boom', () => {
      throw new Error('socket hang up');
    });
    const { runs, failure } = await runStage(ctx, 'post', [
      hook('listing', { app: 'db' }),
      hook('boom', { app: 'db' }),
      { name: 'everywhere', command: ['x'] } as unknown as Hook,
      hook('thaw', { app: 'db' }),
    ]);
    assert.deepEqual(
      runs.map((r) => [r.hook, r.pod, r.outcome, r.output]),
      [
        ['listing', '', 'Failed', 'could not list pods: etcdserver: request timed out'],
        ['boom', 'db-0', 'Failed', 'socket hang up'],
        ['everywhere', '', 'Failed', 'the hook has no selector'],
        ['thaw', 'db-0', 'Succeeded', undefined],
      ],
    );
    assert.equal(failure, 'post hook "listing" failed: could not list pods: etcdserver: request timed out');
  });

  it('an exec error (pod gone, forbidden) is the run output, after what the command printed', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }));
    exec.answers.set('db-0/db freeze', () => ({
      timedOut: false,
      output: '',
      error: 'pods "db-0" is forbidden: User "x" cannot create resource "pods/exec"',
    }));
    const { runs, failure } = await runStage(ctx, 'pre', [hook('freeze', { app: 'db' })]);
    assert.equal(runs[0].outcome, 'Failed');
    assert.equal(runs[0].exitCode, undefined);
    assert.match(failure ?? '', /^pre hook "freeze" failed in pod db-0\/db: pods "db-0" is forbidden/);
  });

  it('a cancel kills the running command and ends the stage with what ran', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }), pod('db-1', { app: 'db' }));
    const controller = new AbortController();
    ctx.signal = controller.signal;
    exec.answers.set(
      'db-0/db hang',
      (req) =>
        new Promise<ExecResult>((resolve) => {
          req.signal?.addEventListener('abort', () => resolve({ timedOut: false, output: 'half', error: 'killed' }));
          setImmediate(() => controller.abort());
        }),
    );
    const { runs, failure } = await runStage(ctx, 'post', [hook('hang', { app: 'db' }), hook('thaw', { app: 'db' })]);
    assert.deepEqual(exec.where(), ['hang@db-0/db']);
    assert.equal(exec.calls[0].signal, controller.signal);
    assert.deepEqual(
      runs.map((r) => [r.hook, r.pod, r.outcome, r.output]),
      [['hang', 'db-0', 'Failed', 'half\nkilled']],
    );
    assert.equal(failure, 'post hooks canceled: hook "hang" failed in pod db-0/db: half | killed');
  });

  it('an already canceled stage runs nothing', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }));
    ctx.signal = AbortSignal.abort();
    const { runs, failure } = await runStage(ctx, 'post', [hook('thaw', { app: 'db' })]);
    assert.equal(exec.calls.length, 0);
    assert.deepEqual(runs, []);
    assert.equal(failure, 'post hooks canceled before hook "thaw"');
  });

  it('bounds what a PodExec returns to the last 4 KiB, and the failure line to one short line', async () => {
    const { ctx, exec } = setup(pod('db-0', { app: 'db' }));
    const huge = `${'x'.repeat(5 << 20)}\n${'é'.repeat(3000)}\r\u001b[31mred\u0000\nthe end`;
    exec.answers.set('db-0/db spew', failing(1, huge));
    const { runs, failure } = await runStage(ctx, 'pre', [hook('spew', { app: 'db' })]);
    const output = runs[0].output ?? '';
    assert.ok(Buffer.byteLength(output) <= outputLimit, `kept ${Buffer.byteLength(output)} bytes`);
    assert.ok(output.endsWith('red\u0000\nthe end'));
    assert.ok(!output.includes('\ufffd'), 'cut on a character boundary');
    assert.ok(failure && !/[\u0000-\u001f]/.test(failure) && failure.length < 500, failure);
    assert.match(failure, /\[31mred \| the end$/);
  });

  it('names at their limits pass through whole', async () => {
    const podName = `p${'a'.repeat(251)}z`;
    const hookName = `h${'b'.repeat(61)}z`;
    const { ctx, exec } = setup({
      ...pod(podName, { [`${'k'.repeat(63)}`]: 'v'.repeat(63) }),
      spec: { containers: [{ name: `c${'c'.repeat(62)}` }] },
    });
    exec.answers.set(`${podName}/c${'c'.repeat(62)} ${hookName}`, failing(255, 'no'));
    const { runs, failure } = await runStage(ctx, 'pre', [hook(hookName, { [`${'k'.repeat(63)}`]: 'v'.repeat(63) })]);
    assert.deepEqual(
      runs.map((r) => [r.hook, r.pod, r.container, r.exitCode]),
      [[hookName, podName, `c${'c'.repeat(62)}`, 255]],
    );
    assert.equal(failure, `pre hook "${hookName}" failed with exit code 255 in pod ${podName}/c${'c'.repeat(62)}: no`);
  });
});
