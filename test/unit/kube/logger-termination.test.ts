import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../src/shared/kube/logger.ts';
import { encodeTerminationMessage, writeTerminationMessage } from '../../../src/shared/kube/termination.ts';

test('every log line is one JSON object with the bound resource, and secrets are masked at any depth', () => {
  const lines: string[] = [];
  const log = createLogger({ resource: 'DataUpload/ns/du' }, { write: (l) => lines.push(l) }).with({
    step: 'transfer',
  });
  log.info('opened the repository', {
    location: 's3:http://x/b/p/ns',
    password: 'hunter2',
    s3: { credentials: { secretAccessKey: 'abc' } },
  });
  log.info('opened the repository', { n: 2 });
  log.debug('not shown at the default level');
  assert.equal(lines.length, 2, 'repeated messages are not collapsed; debug is off');
  const first = JSON.parse(lines[0]);
  assert.equal(first.resource, 'DataUpload/ns/du');
  assert.equal(first.step, 'transfer');
  assert.equal(first.level, 'info');
  assert.equal(first.msg, 'opened the repository');
  assert.equal(first.password, '[redacted]');
  assert.equal(first.s3.credentials, '[redacted]');
  assert.ok(!lines.join('').includes('hunter2') && !lines.join('').includes('abc"'));
});

test('the termination message is JSON, at most 4096 bytes, and is written to the given path', () => {
  const long = encodeTerminationMessage({ outcome: 'Failed', reason: 'x'.repeat(10_000), counters: { bytes: 1 } });
  assert.ok(Buffer.byteLength(long) <= 4096);
  assert.equal(JSON.parse(long).outcome, 'Failed');
  assert.equal(JSON.parse(long).counters.bytes, 1);
  const dir = mkdtempSync(join(tmpdir(), 'ferry-term-'));
  assert.equal(writeTerminationMessage({ outcome: 'Advanced', reason: 'snapshot ready' }, join(dir, 'log')), true);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'log'), 'utf8')), {
    outcome: 'Advanced',
    reason: 'snapshot ready',
  });
  assert.equal(writeTerminationMessage({ outcome: 'x', reason: 'y' }, join(dir, 'missing', 'log')), false);
});
