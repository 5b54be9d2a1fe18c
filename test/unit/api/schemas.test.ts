// What the valibot schemas say about invalid fields: the field's path and what is allowed there.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { issueText, validateFields } from '../../../src/shared/api/schemas.ts';

const upload = { sourcePVC: 'data', backupStorageLocation: 'default' };

describe('validateFields', () => {
  it('accepts a minimal DataUpload spec', () => {
    assert.deepEqual(validateFields('DataUpload', 'spec', upload), []);
  });

  const cases: [string, unknown, string][] = [
    ['missing spec', undefined, 'spec: is required'],
    ['spec of the wrong type', 'x', 'spec: must be an object'],
    ['spec given as a list', [], 'spec: must be an object, not a list'],
    ['missing required field', { sourcePVC: 'data' }, 'spec.backupStorageLocation: is required'],
    ['name with capitals', { ...upload, sourcePVC: 'Data' }, 'spec.sourcePVC: must be a DNS-1123 subdomain'],
    [
      'too long a name',
      { ...upload, sourcePVC: 'a'.repeat(254) },
      'spec.sourcePVC: must be at most 253 characters long',
    ],
    [
      'bad duration',
      { ...upload, operationTimeout: '10 minutes' },
      "spec.operationTimeout: must be a duration such as '30s'",
    ],
    ['boolean as a string', { ...upload, cancel: 'yes' }, 'spec.cancel: must be true or false'],
    ['tag with a comma', { ...upload, tags: { team: 'a,b' } }, 'spec.tags.team: must be text without commas'],
    [
      'tag key with a dot',
      { ...upload, tags: { 'app.kubernetes.io/name': 1 } },
      'spec.tags["app.kubernetes.io/name"]: must be a string',
    ],
  ];
  for (const [name, spec, expected] of cases) {
    it(`names the field and what is allowed: ${name}`, () => {
      const texts = validateFields('DataUpload', 'spec', spec).map(issueText);
      assert.ok(
        texts.some((t) => t.startsWith(expected)),
        `expected "${expected}..." in ${JSON.stringify(texts)}`,
      );
    });
  }

  it('counts characters as code points, as the apiserver does', () => {
    const emoji = '\u{1F600}';
    const status = { phase: 'Failed', message: emoji.repeat(32768) };
    assert.deepEqual(validateFields('DataUpload', 'status', status), []);
    assert.equal(validateFields('DataUpload', 'status', { ...status, message: emoji.repeat(32769) }).length, 1);
  });

  it('wants exactly one restore source, and unique list items', () => {
    const spec = {
      targetPVC: { name: 'data', accessModes: ['ReadWriteOnce', 'ReadWriteOnce'] },
      backupStorageLocation: 'default',
      source: {},
    };
    const texts = validateFields('DataDownload', 'spec', spec).map(issueText);
    assert.ok(texts.includes('spec.source: must set exactly one of snapshotID, dataUpload'), texts.join('; '));
    assert.ok(
      texts.some((t) => t.startsWith('spec.targetPVC.accessModes: must not repeat an item')),
      texts.join('; '),
    );
  });

  it('keys conditions by type', () => {
    const condition = {
      type: 'Queued',
      status: 'True',
      reason: 'ConcurrencyLimit',
      message: '',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    };
    assert.deepEqual(validateFields('DataUpload', 'status', { conditions: [condition] }), []);
    const texts = validateFields('DataUpload', 'status', {
      conditions: [condition, { ...condition, status: 'False' }],
    }).map(issueText);
    assert.deepEqual(texts, ['status.conditions: must not repeat an item (type="Queued" appears more than once)']);
  });
});
