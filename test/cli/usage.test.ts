// Exit codes scripts rely on: 2 and a message naming the flag for bad usage, 1 for a failed operation, 0 for help.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { ferry, hasStackTrace } from '../support/ferry-cli.ts';
import type { FerryEnv } from '../support/ferry-cli.ts';
import { testKDF, testPassword } from '../support/repo.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-cli-usage-'));
const repo = join(work, 'repo');
await (await Repository.init(new FsBackend(repo), testPassword, { kdf: testKDF })).close();
test.after(() => rm(work, { recursive: true, force: true }));

interface Case {
  name: string;
  args: string[];
  env?: FerryEnv;
  code: number;
  /** what the message on stderr must contain */
  says: RegExp;
}

const cases: Case[] = [
  { name: 'no arguments', args: [], code: 2, says: /USAGE/ },
  { name: 'missing --repo', args: ['repo', 'snapshots'], code: 2, says: /--repo/ },
  {
    name: 'missing --repo, even without a password',
    args: ['repo', 'check'],
    env: { password: null },
    code: 2,
    says: /--repo/,
  },
  {
    name: 'missing password',
    args: ['repo', 'snapshots', '-r', repo],
    env: { password: null },
    code: 2,
    says: /--password-file/,
  },
  {
    name: 'unreadable --password-file',
    args: ['repo', 'snapshots', '-r', repo, '--password-file', join(work, 'nope')],
    code: 2,
    says: /--password-file/,
  },
  {
    name: '--read-data-subset 200%',
    args: ['repo', 'check', '-r', repo, '--read-data-subset', '200%'],
    code: 2,
    says: /--read-data-subset/,
  },
  {
    name: '--read-data-subset without %',
    args: ['repo', 'check', '-r', repo, '--read-data-subset', '10'],
    code: 2,
    says: /--read-data-subset/,
  },
  {
    name: '--pack-size 0',
    args: ['repo', 'backup', '-r', repo, '--pack-size', '0', work],
    code: 2,
    says: /--pack-size/,
  },
  {
    name: '--repack-unused 0%',
    args: ['repo', 'prune', '-r', repo, '--repack-unused', '0%'],
    code: 2,
    says: /--repack-unused/,
  },
  {
    name: 'a misspelt flag',
    args: ['repo', 'check', '-r', repo, '--read-dat'],
    code: 2,
    says: /unknown flag --read-dat/,
  },
  { name: 'an unknown command', args: ['repo', 'frobnicate', '-r', repo], code: 2, says: /frobnicate/ },
  { name: 'backup without a path', args: ['repo', 'backup', '-r', repo], code: 2, says: /PATH/ },
  { name: 'restore without --target', args: ['repo', 'restore', '-r', repo, 'latest'], code: 2, says: /--target/ },
  { name: 'forget without an id', args: ['repo', 'forget', '-r', repo], code: 2, says: /snapshot id/ },
  {
    name: 'key add without a new password file',
    args: ['repo', 'key', 'add', '-r', repo],
    code: 2,
    says: /new-password-file/,
  },
  {
    name: 'an invalid S3 location',
    args: ['repo', 'snapshots', '-r', 's3:http://'],
    code: 1,
    says: /S3 repository location/,
  },
  {
    name: 'restore of a snapshot that does not exist',
    args: ['repo', 'restore', '-r', repo, 'deadbeef', '--target', join(work, 't')],
    code: 1,
    says: /deadbeef/,
  },
  {
    name: 'forget of a snapshot that does not exist',
    args: ['repo', 'forget', '-r', repo, 'deadbeef'],
    code: 1,
    says: /deadbeef/,
  },
];

for (const c of cases) {
  test(`${c.name}: exit ${c.code}`, async () => {
    const r = await ferry(c.args, c.env);
    const stderr = stripVTControlCharacters(r.stderr);
    const shown = stripVTControlCharacters(r.stdout) + stderr;
    assert.equal(r.code, c.code, `exit ${r.code}:\n${shown}`);
    assert.match(shown, c.says);
    assert.ok(!hasStackTrace(stderr), `a stack trace instead of a message:\n${stderr}`);
    if (c.code !== 0) assert.equal(r.stdout.includes('{'), false, 'a failure prints no JSON result');
  });
}

test('--help exits 0 and lists the flags of the command', async () => {
  const r = await ferry(['repo', 'backup', '--help']);
  assert.equal(r.code, 0);
  const text = stripVTControlCharacters(r.stdout + r.stderr);
  for (const flag of ['--repo', '--password-file', '--pack-size', '--json'])
    assert.ok(text.includes(flag), `help lacks ${flag}`);
});

test('--version prints the version of package.json and exits 0', async () => {
  const r = await ferry(['--version']);
  assert.equal(r.code, 0, r.stderr);
  const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  assert.equal(r.stdout.trim(), version);
});

test('FERRY_REPOSITORY stands in for --repo', async () => {
  const r = await ferry(['repo', 'snapshots', '--json'], { env: { FERRY_REPOSITORY: repo } });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), []);
});
