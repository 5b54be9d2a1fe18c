// The peers' command lines: ferry must run as its image runs it, or the figures describe another program.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ferryPeer, imageTunables } from '../peers/ferry.ts';

test('ferry runs with the malloc settings its image sets for every process', () => {
  const containerfile = readFileSync(join(import.meta.dirname, '..', '..', 'Containerfile'), 'utf8');
  const set = /GLIBC_TUNABLES=(\S+)/.exec(containerfile)?.[1];
  assert.equal(set, imageTunables, 'the Containerfile and the benchmark disagree on GLIBC_TUNABLES');
  const cmd = ferryPeer.repo({ kind: 'local', dir: '/tmp/r' }, '/tmp/w').backup('/data');
  assert.equal(cmd.env.GLIBC_TUNABLES, imageTunables);
  assert.deepEqual(cmd.argv.slice(-6), ['repo', 'backup', '--json', '/data', '--repo', '/tmp/r']);
});
