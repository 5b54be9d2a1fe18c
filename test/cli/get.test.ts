// The body shared by `ferry backup|restore|schedule|location get`: one named object, a namespace's list sorted by
// name, every namespace's with -A (the columns then name the namespace), a clear error for a missing name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { printGet } from '../../src/cli/resource/get.ts';
import type { Column } from '../../src/cli/resource/table.ts';
import { MemoryKube } from '../../src/shared/kube/memory.ts';
import type { KubeObject } from '../../src/shared/kube/kube.ts';

function schedule(namespace: string, name: string): KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { namespace, name },
    spec: {},
  } as KubeObject;
}

const columns = (all: boolean): Column<KubeObject>[] => [
  ...(all ? [{ header: 'namespace', value: (o: KubeObject) => o.metadata.namespace ?? '' }] : []),
  { header: 'name', value: (o) => o.metadata.name },
];

/** What `work` wrote to stdout and stderr. */
async function captured(work: () => Promise<void>): Promise<{ out: string; err: string }> {
  const got = { out: '', err: '' };
  const write = { out: process.stdout.write, err: process.stderr.write };
  process.stdout.write = ((s: string) => {
    got.out += s;
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => {
    got.err += s;
    return true;
  }) as typeof process.stderr.write;
  try {
    await work();
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
  return got;
}

const lines = (text: string): string[][] =>
  text
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/));

test('get lists a namespace by name, every namespace with -A, or shows the one named', async () => {
  const kube = new MemoryKube();
  kube.seed(schedule('b', 'zeta'), schedule('a', 'nightly'), schedule('a', 'hourly'));
  const req = { kind: 'BackupSchedule' as const, namespace: 'a', format: 'table' as const, columns };
  assert.deepEqual(lines((await captured(() => printGet(kube, req))).out), [['NAME'], ['hourly'], ['nightly']]);
  assert.deepEqual(lines((await captured(() => printGet(kube, { ...req, allNamespaces: true }))).out), [
    ['NAMESPACE', 'NAME'],
    ['a', 'hourly'],
    ['a', 'nightly'],
    ['b', 'zeta'],
  ]);
  // a name wins over -A
  assert.deepEqual(
    lines((await captured(() => printGet(kube, { ...req, name: 'nightly', allNamespaces: true }))).out),
    [['NAME'], ['nightly']],
  );
  const doc = JSON.parse(
    (await captured(() => printGet(kube, { ...req, name: 'nightly', format: 'json' }))).out,
  ) as KubeObject;
  assert.equal(doc.metadata.name, 'nightly');
});

test('get says on stderr when there is nothing, and names what is missing', async () => {
  const kube = new MemoryKube();
  const req = { kind: 'BackupSchedule' as const, namespace: 'a', format: 'table' as const, columns };
  assert.deepEqual(await captured(() => printGet(kube, req)), {
    out: '',
    err: 'No BackupSchedules found in namespace a.\n',
  });
  await assert.rejects(printGet(kube, { ...req, name: 'nightly' }), {
    message: 'BackupSchedule "nightly" not found in namespace a.',
  });
});
