// What ferry prints reads the same wherever it goes: colour codes only on a terminal (a pipe or a log file gets
// plain text), no clock on some terminals and not others, and one time format in every describe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderDescription } from '../../src/cli/kube/describe.ts';
import { cliEntry, ferry, nodeBin } from '../support/ferry-cli.ts';
import { uploadWith } from '../support/cli-upload.ts';

const escape = '\x1b';

test('piped, a mistyped command and the help carry no colour codes', async () => {
  const typo = await ferry(['craete']);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /unknown command "craete"/);
  assert.ok(!typo.stderr.includes(escape), JSON.stringify(typo.stderr));
  const help = await ferry(['backup', 'create', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /USAGE/);
  assert.ok(!(help.stdout + help.stderr).includes(escape), JSON.stringify(help.stdout));
});

test('on a wide terminal a success line carries no clock', async (t) => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-plain-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  // script(1) gives the command a terminal 120 columns wide, where consola's reporter added its clock
  const command = `stty cols 120; FERRY_PASSWORD=x '${nodeBin}' '${cliEntry}' repo init -r '${join(work, 'repo')}'`;
  const r = spawnSync('script', ['-qec', command, '/dev/null'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'xterm' },
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /created repository [0-9a-f]{10} at /);
  assert.doesNotMatch(r.stdout, /\d{1,2}:\d{2}:\d{2}/, JSON.stringify(r.stdout));
});

test('describe prints every time in one format: RFC 3339 in UTC, to the second', () => {
  const r = uploadWith(
    {
      phase: 'Completed',
      startTimestamp: '2026-01-01T00:00:01.001Z',
      completionTimestamp: '2026-01-01T00:00:09.5Z',
      steps: {
        snapshot: { attempts: 1, endTime: '2026-01-01T00:00:05.076000Z', outcome: 'Succeeded' },
      },
      conditions: [{ type: 'Succeeded', status: 'True', reason: 'Done', lastTransitionTime: '2026-01-01T00:00:09Z' }],
    },
    { creationTimestamp: '2026-01-01T00:00:00Z', namespace: 'app' },
  );
  const text = renderDescription({
    object: r,
    phaseHistory: [{ time: '2026-01-01T00:00:05.076000Z', phase: 'Accepted', step: 'snapshot', attempts: 1 }],
    jobs: [],
    events: [{ time: '2026-01-01T00:00:07.076000Z', type: 'Normal', reason: 'R', from: 'f', note: 'n', count: 1 }],
  });
  const times = text.match(/2026-01-01T[^\s)]*/g) ?? [];
  assert.ok(times.length >= 6, text);
  for (const t of times) assert.match(t, /^2026-01-01T\d{2}:\d{2}:\d{2}Z$/, text);
});
