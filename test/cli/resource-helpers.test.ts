// The shared helpers of the Kubernetes-facing commands: tables, describe layout, names, -o and kubeconfig choice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderDescribe } from '../../src/cli/resource/describe.ts';
import { openKube } from '../../src/cli/resource/kube.ts';
import { kindAndName, objectName, optionalName } from '../../src/cli/resource/names.ts';
import { asDocument, outputFormat } from '../../src/cli/resource/output.ts';
import { renderTable } from '../../src/cli/resource/table.ts';
import { age, between, span } from '../../src/cli/resource/time.ts';
import { UsageError } from '../../src/cli/run.ts';
import { writeKubeconfig } from '../support/kubeconfig.ts';

test('tables pad every column but the last to its widest cell', () => {
  const text = renderTable(
    ['name', 'phase', 'age'],
    [
      ['a', 'InProgress', '5s'],
      ['longer-name', 'New', '12m'],
    ],
  );
  assert.equal(text, 'NAME          PHASE        AGE\na             InProgress   5s\nlonger-name   New          12m\n');
});

test('describe aligns fields, skips empty ones and says <none> for empty sections', () => {
  const text = renderDescribe(
    [
      ['Name', 'x'],
      ['Namespace', 'app'],
      ['Message', undefined],
    ],
    [
      { title: 'Conditions', table: { headers: ['type', 'status'], rows: [['Ready', 'True']] } },
      { title: 'Events', table: { headers: ['type'], rows: [] } },
    ],
  );
  assert.equal(
    text,
    'Name:       x\nNamespace:  app\nConditions:\n  TYPE    STATUS\n  Ready   True\nEvents:  <none>\n',
  );
});

test('spans and ages read like kubectl', () => {
  assert.equal(span(45_000), '45s');
  assert.equal(span(150_000), '2m30s');
  assert.equal(span(3 * 3600_000 + 12 * 60_000), '3h12m');
  assert.equal(span(5 * 86400_000 + 4 * 3600_000), '5d4h');
  assert.equal(age('2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:01:00Z')), '60s');
  assert.equal(age(undefined), '<unknown>');
  assert.equal(between('2026-01-01T00:00:00Z', '2026-01-01T00:00:07Z'), '7s');
  assert.equal(between(undefined), '');
});

test('names and KIND/NAME are checked, with the argument named in the message', () => {
  assert.equal(objectName('nightly-1', 'NAME'), 'nightly-1');
  assert.throws(
    () => objectName('Bad_Name', '--pvc'),
    (e) => e instanceof UsageError && /--pvc "Bad_Name" is not a valid object name/.test(e.message),
  );
  assert.throws(
    () => objectName(undefined, 'NAME'),
    (e) => e instanceof UsageError && e.message === 'NAME is required',
  );
  assert.equal(optionalName(undefined, '--location'), undefined);
  assert.equal(optionalName('s3-main', '--location'), 's3-main');
  assert.throws(
    () => optionalName('', '--location'),
    (e) => e instanceof UsageError && e.message === '--location is required',
  );
  assert.throws(
    () => optionalName('S3', '--location'),
    (e) => e instanceof UsageError && /--location "S3" is not a valid object name/.test(e.message),
  );
  const aliases = { dataupload: 'DataUpload', backup: 'DataUpload' } as const;
  assert.deepEqual(kindAndName('Backup/x', aliases), { kind: 'DataUpload', name: 'x' });
  assert.throws(
    () => kindAndName('x', aliases),
    (e) => e instanceof UsageError && /must be KIND\/NAME with KIND one of: dataupload, backup/.test(e.message),
  );
  assert.throws(
    () => kindAndName('pod/x', aliases),
    (e) => e instanceof UsageError && /"pod" is not a kind/.test(e.message),
  );
});

test('-o accepts json, yaml and wide only; one named object prints as itself, else a List', () => {
  assert.equal(outputFormat({}), 'table');
  assert.equal(outputFormat({ output: 'yaml' }), 'yaml');
  assert.throws(
    () => outputFormat({ output: 'xml' }),
    (e) => e instanceof UsageError && /-o xml is not an output format; use json, yaml or wide/.test(e.message),
  );
  const obj = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
  assert.equal(asDocument([obj], true), obj);
  assert.deepEqual(asDocument([obj], false), { apiVersion: 'v1', kind: 'List', items: [obj], metadata: {} });
});

test('the kubeconfig: --context must exist, and -n wins over the context namespace', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-kubeconfig-'));
  try {
    const file = join(dir, 'config');
    await writeKubeconfig(file, {
      server: 'https://127.0.0.1:1',
      token: 't',
      contexts: [{ name: 'one', namespace: 'team-a' }, { name: 'two' }],
    });
    const a = openKube({ kubeconfig: file });
    assert.equal(a.namespace, 'team-a');
    a.close();
    const b = openKube({ kubeconfig: file, context: 'two' });
    assert.equal(b.namespace, 'default');
    b.close();
    const c = openKube({ kubeconfig: file, namespace: 'x', 'ferry-namespace': 'ferry' });
    assert.equal(c.namespace, 'x');
    assert.equal(c.ferryNamespace, 'ferry');
    c.close();
    assert.throws(
      () => openKube({ kubeconfig: file, context: 'three' }),
      (e) => e instanceof UsageError && /--context three is not in the kubeconfig, which has: one, two/.test(e.message),
    );
    assert.throws(
      () => openKube({ kubeconfig: join(dir, 'missing') }),
      (e) => e instanceof UsageError && /cannot read --kubeconfig/.test(e.message),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
