// Bad usage of the Kubernetes-facing commands: exit 2 and one message naming the argument or flag and what is
// allowed, decided before any request (the kubeconfig points at a port nobody listens on, so a request would fail
// with exit 1 instead).
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { ferry, hasStackTrace } from '../support/ferry-cli.ts';
import { writeKubeconfig } from '../support/kubeconfig.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-kube-usage-'));
const kubeconfig = join(work, 'config');
await writeKubeconfig(kubeconfig, { server: 'https://127.0.0.1:9', token: 't' });
test.after(() => rm(work, { recursive: true, force: true }));

const k = ['--kubeconfig', kubeconfig];

const cases: { name: string; args: string[]; says: RegExp }[] = [
  { name: 'backup create without NAME', args: ['backup', 'create', '--pvc', 'data', ...k], says: /NAME is required/ },
  { name: 'backup create without --pvc', args: ['backup', 'create', 'b1', ...k], says: /--pvc is required/ },
  {
    name: 'backup create with an invalid name',
    args: ['backup', 'create', 'Nightly_1', '--pvc', 'data', ...k],
    says: /NAME "Nightly_1" is not a valid object name: lower-case letters/,
  },
  {
    name: 'backup create with a bad --timeout',
    args: ['backup', 'create', 'b1', '--pvc', 'data', '--timeout', '10 minutes', ...k],
    says: /--timeout "10 minutes" is not a duration above zero/,
  },
  {
    name: 'backup get -o xml',
    args: ['backup', 'get', '-o', 'xml', ...k],
    says: /-o xml is not an output format; use json, yaml or wide/,
  },
  { name: 'backup describe without NAME', args: ['backup', 'describe', ...k], says: /NAME is required/ },
  {
    name: 'backup logs --step bogus',
    args: ['backup', 'logs', 'b1', '--step', 'bogus', ...k],
    says: /--step bogus is not a step; use one of: snapshot, expose, transfer, finalize, delete/,
  },
  {
    name: 'backup create with a misspelt flag',
    args: ['backup', 'create', 'b1', '--pvc', 'data', '--wiat', ...k],
    says: /unknown flag --wiat/,
  },
  { name: 'restore create without --from', args: ['restore', 'create', 'r1', ...k], says: /--from is required/ },
  {
    name: 'rerun without KIND/NAME',
    args: ['rerun', ...k],
    says: /KIND\/NAME is required and must be KIND\/NAME with KIND one of: dataupload/,
  },
  {
    name: 'rerun NAME without a kind',
    args: ['rerun', 'nightly', ...k],
    says: /KIND\/NAME "nightly" must be KIND\/NAME/,
  },
  {
    name: 'cancel of a kind it does not handle',
    args: ['cancel', 'pod/x', ...k],
    says: /"pod" is not a kind this command handles; use one of: dataupload, datauploads, du, backup, datadownload/,
  },
  {
    name: 'backup create --tag without =',
    args: ['backup', 'create', 'b1', '--pvc', 'data', '--tag', 'nightly', ...k],
    says: /--tag "nightly" is not key=value/,
  },
  {
    name: 'backup create --expire in days',
    args: ['backup', 'create', 'b1', '--pvc', 'data', '--expire', '30d', ...k],
    says: /--expire "30d" is not a duration above zero \(examples: .*720h\)/,
  },
  {
    name: 'backup delete with both NAME and -l',
    args: ['backup', 'delete', 'b1', '-l', 'app=db', ...k],
    says: /give NAME or --selector \(-l\), not both/,
  },
  {
    name: 'a --context the kubeconfig lacks',
    args: ['backup', 'get', '--context', 'prod', ...k],
    says: /--context prod is not in the kubeconfig, which has: box/,
  },
  {
    name: 'an unreadable --kubeconfig',
    args: ['backup', 'get', '--kubeconfig', join(work, 'missing')],
    says: /cannot read --kubeconfig/,
  },
];

// each case is a process that mostly starts up: a few at a time
describe('bad usage', { concurrency: 4 }, () => {
  for (const c of cases) {
    it(`${c.name}: exit 2`, async () => {
      const r = await ferry(c.args, { password: null });
      const stderr = stripVTControlCharacters(r.stderr);
      assert.equal(r.code, 2, `exit ${r.code}:\n${stderr}${r.stdout}`);
      assert.match(stderr, c.says);
      assert.ok(!hasStackTrace(stderr), `a stack trace instead of a message:\n${stderr}`);
      assert.equal(r.stdout, '');
    });
  }
});

test('a request that cannot reach the cluster fails with exit 1, not 2', async () => {
  const r = await ferry(['backup', 'get', ...k], { password: null });
  assert.equal(r.code, 1, stripVTControlCharacters(r.stderr));
  assert.ok(!hasStackTrace(r.stderr), r.stderr);
});
