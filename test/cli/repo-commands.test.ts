// Every `ferry repo` command run once as a real process with --json, in the order an operator would use them:
// the JSON is one parseable document on stdout, its numbers agree with the repository, and the exit code is 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ferryOK, parseJSON } from '../support/ferry-cli.ts';
import { randomBytes } from '../support/repo.ts';
import { restic } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-cli-'));
const repo = join(work, 'repo');
const source = join(work, 'source');
const passwordFile = join(work, 'password');
const password = 'cli test password';
test.after(() => rm(work, { recursive: true, force: true }));

await mkdir(join(source, 'sub'), { recursive: true });
await writeFile(join(source, 'a.bin'), randomBytes(700_000, 1));
await writeFile(join(source, 'sub', 'b.txt'), 'hello ferry\n'.repeat(1000));
// an editor's trailing newline is not part of the password
await writeFile(passwordFile, `${password}\n`);

const common = ['-r', repo, '--password-file', passwordFile, '--json'];
const run = async <T>(...args: string[]): Promise<T> =>
  parseJSON<T>(await ferryOK(['repo', ...args, ...common], { password: null }));

interface BackupJSON {
  message_type: string;
  snapshot_id: string;
  parent: string | null;
  files_new: number;
  files_unmodified: number;
  data_blobs: number;
  total_files_processed: number;
  total_bytes_processed: number;
  packs_written: number;
}

interface SnapshotJSON {
  id: string;
  short_id: string;
  paths: string[];
  tags: string[];
  hostname: string;
  parent?: string | null;
}

let first: BackupJSON;
let second: BackupJSON;

test('init --json names the repository, and restic opens it with the same password file', async () => {
  const r = await run<{ message_type: string; id: string; repository: string }>('init');
  assert.equal(r.message_type, 'initialized');
  assert.match(r.id, /^[0-9a-f]{64}$/);
  assert.equal(r.repository, repo);
  const cat = JSON.parse(await restic({ repo, password }, ['cat', 'config'])) as { id: string; version: number };
  assert.deepEqual([cat.id, cat.version], [r.id, 2]);
});

test('backup --json reports what was stored; a second run reuses the first as parent', async () => {
  first = await run<BackupJSON>('backup', source, '--tag', 'one,two', '--tag', 'three', '--host', 'cli-host');
  assert.equal(first.message_type, 'summary');
  assert.equal(first.parent, null);
  assert.equal(first.files_new, 2);
  assert.equal(first.total_files_processed, 2);
  assert.equal(first.total_bytes_processed, 700_000 + 12_000);
  assert.ok(first.data_blobs >= 2 && first.packs_written >= 1);
  second = await run<BackupJSON>('backup', source, '--host', 'cli-host');
  assert.equal(second.parent, first.snapshot_id);
  assert.equal(second.files_unmodified, 2);
  assert.equal(second.data_blobs, 0);
});

test('snapshots --json lists both, oldest first, with tags, host and paths', async () => {
  const list = await run<SnapshotJSON[]>('snapshots');
  assert.deepEqual(
    list.map((s) => s.id),
    [first.snapshot_id, second.snapshot_id],
  );
  assert.deepEqual(list[0].tags, ['one', 'two', 'three']);
  assert.equal(list[0].short_id, first.snapshot_id.slice(0, 8));
  assert.deepEqual(
    list.map((s) => [s.hostname, s.paths]),
    [
      ['cli-host', [source]],
      ['cli-host', [source]],
    ],
  );
});

test('check --json, with --read-data and with --read-data-subset, finds no errors', async () => {
  const plain = await run<{ errors: string[]; snapshots: number; packs_read: number }>('check');
  assert.deepEqual([plain.errors, plain.snapshots, plain.packs_read], [[], 2, 0]);
  const full = await run<{ errors: string[]; packs_read: number; blobs_read: number }>('check', '--read-data');
  assert.deepEqual(full.errors, []);
  assert.ok(full.packs_read >= 1 && full.blobs_read >= 3);
  const subset = await run<{ errors: string[]; packs_read: number }>('check', '--read-data-subset', '100%');
  assert.equal(subset.packs_read, full.packs_read);
});

test('restore --json restores the snapshot (and a path inside it) byte for byte', async () => {
  const target = join(work, 'restored');
  const r = await run<{ snapshot_id: string; files_restored: number; bytes_restored: number }>(
    'restore',
    first.snapshot_id.slice(0, 8),
    '--target',
    target,
  );
  assert.equal(r.snapshot_id, first.snapshot_id);
  assert.equal(r.bytes_restored, 712_000);
  // files as the backup counted them: the folders on the way (sub/ and those above the source) are not files
  assert.equal(r.files_restored, first.total_files_processed);
  assert.deepEqual(await readFile(join(target, source, 'a.bin')), await readFile(join(source, 'a.bin')));
  const sub = join(work, 'restored-sub');
  await run('restore', `latest:${source}/sub`, '--target', sub);
  assert.equal(await readFile(join(sub, 'b.txt'), 'utf8'), 'hello ferry\n'.repeat(1000));
});

test('key add --json adds a password that opens the repository', async () => {
  const newFile = join(work, 'new-password');
  await writeFile(newFile, 'second password\n');
  const r = await run<{ message_type: string; id: string }>('key', 'add', '--new-password-file', newFile);
  assert.equal(r.message_type, 'key_added');
  const list = parseJSON<SnapshotJSON[]>(
    await ferryOK(['repo', 'snapshots', '-r', repo, '--json'], { password: 'second password' }),
  );
  assert.equal(list.length, 2);
});

test('unlock --json removes nothing when no lock is stale', async () => {
  const r = await run<{ removed: unknown[] }>('unlock');
  assert.deepEqual(r.removed, []);
});

test('forget --json removes one snapshot; prune --json then frees its data only if unused', async () => {
  const f = await run<{ removed: string[] }>('forget', second.snapshot_id.slice(0, 10));
  assert.deepEqual(f.removed, [second.snapshot_id]);
  const p = await run<{ packsDeleted: number; plan: { remove: unknown[] } }>('prune');
  assert.equal(p.packsDeleted, p.plan.remove.length);
  const list = await run<SnapshotJSON[]>('snapshots');
  assert.deepEqual(
    list.map((s) => s.id),
    [first.snapshot_id],
  );
  await restic({ repo, password }, ['check', '--read-data']);
});

test('forget --prune --json removes the last snapshot and all of its data', async () => {
  const r = await run<{ removed: string[]; prune: { packsDeleted: number } }>('forget', first.snapshot_id, '--prune');
  assert.deepEqual(r.removed, [first.snapshot_id]);
  assert.ok(r.prune.packsDeleted >= 1);
  const check = await run<{ errors: string[]; snapshots: number }>('check', '--read-data');
  assert.deepEqual([check.errors, check.snapshots], [[], 0]);
});
