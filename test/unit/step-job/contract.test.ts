// The step-Job contract: what the dispatcher writes into a Job reads back the same in the step and the CLI, and
// names derived from any valid Kubernetes name (253 characters, a 63-character namespace) fit their limits,
// deterministically and without two long names meeting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildJob } from '../../../src/shared/step-job/job.ts';
import type { FerryResource } from '../../../src/shared/api/types.ts';
import { eventFor } from '../../../src/shared/kube/events.ts';
import { fitted, labelValue } from '../../../src/shared/kube/names.ts';
import {
  jobName,
  labels,
  parseResourceRef,
  resourceNameLabel,
  resourceRef,
  stepEnv,
} from '../../../src/shared/step-job/contract.ts';
import { stepJob } from '../../../src/shared/step-job/jobs.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import type { StepContext } from '../../../src/steps/context.ts';
import { runOne } from '../../../src/steps/data/run.ts';
import { settingsFromEnv } from '../../../src/steps/settings.ts';
import { transition } from '../../../src/steps/data/transition.ts';
import { templates, upload } from '../dispatcher/world.ts';
import { dataUpload, harness } from '../steps/harness.ts';
import { dnsSubdomain, subdomainNames } from '../../support/object-names.ts';

const labelPattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** DNS-1123 subdomains of up to 253 characters: what Kubernetes accepts as the name of a DataUpload. */
const objectName = subdomainNames(12, 42);
const longName = fc
  .tuple(fc.stringMatching(/^[a-z0-9][-a-z0-9.]{62,200}$/), fc.stringMatching(/^[a-z0-9]{1,40}$/))
  .map(([a, b]) => `${a}${b}`);
const namespace = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);

function resource(kind: FerryResource['kind'], ns: string, name: string): FerryResource {
  const r = upload(name);
  return { ...r, kind, metadata: { ...r.metadata, namespace: ns, name } } as FerryResource;
}

test('a label value or name fitted to its limit is at most that long, valid, and the text itself when it fits', () => {
  fc.assert(
    fc.property(objectName, (name) => {
      const value = labelValue(name);
      assert.ok(value.length <= 63, value);
      assert.match(value, labelPattern);
      assert.match(value, dnsSubdomain);
      assert.equal(labelValue(name), value, 'the same name gives the same value on every run');
      if (name.length <= 63) assert.equal(value, name);
      else assert.ok(value.startsWith(name.slice(0, 30)), 'a long name keeps a head a person recognises');
      for (const max of [52, 63, 253]) {
        const fit = fitted(`ferry-x-${name}`, max);
        assert.ok(fit.length <= max && dnsSubdomain.test(fit), fit);
      }
    }),
    { seed: 29, numRuns: 400 },
  );
});

test('two long names sharing their first 63 (or 200) characters get different label values', () => {
  fc.assert(
    fc.property(
      longName,
      fc.stringMatching(/^[a-z0-9]{1,40}$/),
      fc.stringMatching(/^[a-z0-9]{1,40}$/),
      (head, a, b) => {
        fc.pre(a !== b);
        const x = `${head}${a}`.slice(0, 253);
        const y = `${head}${b}`.slice(0, 253);
        fc.pre(x !== y);
        assert.notEqual(labelValue(x), labelValue(y));
        assert.notEqual(fitted(x, 52), fitted(y, 52));
      },
    ),
    { seed: 29, numRuns: 300 },
  );
  assert.notEqual(labelValue(`${'a'.repeat(63)}b`), labelValue(`${'a'.repeat(63)}c`));
  assert.notEqual(
    labelValue(`${'a'.repeat(63)}b`),
    `${'a'.repeat(63)}`.slice(0, 63),
    "a long name does not take a shorter one's value",
  );
});

test('what the dispatcher writes into a step Job, the step and the sweep read back, for any valid name', () => {
  const snapshotTemplate = templates().find((t) => t.metadata.name === 'ferry-step-snapshot')!;
  fc.assert(
    fc.property(
      fc.constantFrom('DataUpload', 'DataDownload') as fc.Arbitrary<FerryResource['kind']>,
      namespace,
      objectName,
      fc.integer({ min: 1, max: 99 }),
      (kind, ns, name, attempt) => {
        const r = resource(kind, ns, name);
        const step = kind === 'DataUpload' ? 'snapshot' : 'expose';
        const job = buildJob(snapshotTemplate, { resource: r, step, attempt, namespace: 'ferry-system' }) as any;
        assert.equal(job.metadata.name, jobName(kind, r.metadata.uid!, step, attempt));
        assert.ok(job.metadata.name.length <= 63 && dnsLabel.test(job.metadata.name), job.metadata.name);
        for (const l of [job.metadata.labels, job.spec.template.metadata.labels]) {
          for (const [key, value] of Object.entries(l as Record<string, string>))
            assert.ok(value.length <= 63 && labelPattern.test(value), `${key}=${value}`);
          assert.equal(l[labels.name], resourceNameLabel(name));
          assert.equal(l[labels.namespace], ns);
        }
        const container = job.spec.template.spec.containers.find((c: any) => c.name === 'step');
        const [argStep, ref] = container.args;
        assert.equal(argStep, step);
        assert.deepEqual(parseResourceRef(ref), { kind, namespace: ns, name });
        assert.equal(job.metadata.annotations['ferry.dev/resource'], resourceRef(r));
        const env = Object.fromEntries(
          container.env.filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value]),
        );
        assert.equal(settingsFromEnv(env).attempt, attempt);
        const read = stepJob(job);
        assert.deepEqual([read?.uid, read?.step, read?.attempt], [r.metadata.uid, step, attempt]);
      },
    ),
    { seed: 29, numRuns: 150 },
  );
});

test('a resource reference names a kind ferry moves, a namespace and a name; nothing else parses', () => {
  assert.deepEqual(parseResourceRef('DataUpload/app/du-1'), { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
  assert.deepEqual(parseResourceRef('datadownload/x/y.z'), { kind: 'DataDownload', namespace: 'x', name: 'y.z' });
  for (const bad of ['', 'DataUpload/app', 'Pod/a/b', 'DataUpload//b', 'DataUpload/a/', 'DataUpload/a/b/c', '/a/b']) {
    assert.throws(
      () => parseResourceRef(bad),
      /does not name a resource: expected DataUpload\/<namespace>\/<name>/,
      bad,
    );
  }
});

test('the attempt number the dispatcher sets is read by the step; a Job made by hand has none; nonsense is refused by name', () => {
  assert.equal(settingsFromEnv({ [stepEnv.attempt]: '3' }).attempt, 3);
  assert.equal(settingsFromEnv({}).attempt, undefined);
  for (const bad of ['0', '-1', '1.5', 'two'])
    assert.throws(() => settingsFromEnv({ [stepEnv.attempt]: bad }), /FERRY_ATTEMPT="[^"]*" is not an attempt number/);
});

test('the step records its attempt in status, so `ferry backup describe` and the next dispatch count the Jobs that ran', async () => {
  const h = harness('snapshot', { attempt: 2 });
  const r = dataUpload({}, {});
  h.kube.seed(r);
  const step = async (ctx: StepContext, x: FerryResource) => {
    await transition(ctx, x, { to: 'Accepted', reason: 'SnapshotReady', note: 'ready' });
    return { outcome: 'Advanced' as const, reason: 'ran' };
  };
  await runOne(h.ctx, step, { kind: 'DataUpload', namespace: r.metadata.namespace!, name: r.metadata.name });
  const stored = await h.kube.get<FerryResource & KubeObject>({
    kind: 'DataUpload',
    namespace: r.metadata.namespace!,
    name: r.metadata.name,
  });
  assert.equal(stored?.status?.steps?.snapshot?.attempts, 2);
});

test('an Event about a resource with any valid name has a valid name itself (a cut name must not end in "." or "-")', () => {
  const base = upload('x');
  fc.assert(
    fc.property(objectName, (name) => {
      const ev = eventFor(
        { ...base, metadata: { ...base.metadata, name } } as unknown as KubeObject,
        { type: 'Normal', reason: 'R', note: 'n', action: 'A' },
        { controller: 'c', instance: 'i' },
        new Date(0),
      );
      assert.ok(ev.metadata.name.length <= 253 && dnsSubdomain.test(ev.metadata.name), ev.metadata.name);
    }),
    { seed: 29, numRuns: 300 },
  );
  const dotAt200 = `${'a'.repeat(199)}.${'b'.repeat(53)}`;
  const ev = eventFor(
    { ...base, metadata: { ...base.metadata, name: dotAt200 } } as unknown as KubeObject,
    { type: 'Normal', reason: 'R', note: 'n', action: 'A' },
    { controller: 'c', instance: 'i' },
    new Date(0),
  );
  assert.match(ev.metadata.name, dnsSubdomain);
});
