// A damaged repository is reported, never trusted: a flipped byte in a pack, a truncated pack, a truncated or
// deleted file. `ferry repo check` (a real process) exits 1 naming what is damaged, `ferry repo restore` refuses
// to write bad data, restic agrees that the repository is damaged, and nothing ends in a stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { decodeTree } from '../../src/engine/tree/tree.ts';
import type { PackedBlob } from '../../src/engine/pack/blob.ts';
import { ferry, hasStackTrace, parseJSON } from '../support/ferry-cli.ts';
import type { FerryRun } from '../support/ferry-cli.ts';
import { randomBytes, testKDF, testPassword } from '../support/repo.ts';
import { flipByte, packFiles, storedFiles, truncateFile } from '../support/repo-files.ts';
import { restic } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-faults-damage-'));
const source = join(work, 'source');
const pristine = join(work, 'pristine');
test.after(() => rm(work, { recursive: true, force: true }));

await mkdir(source);
for (let i = 0; i < 4; i++) await writeFile(join(source, `file-${i}.bin`), randomBytes((1 << 20) + i * 4099, 40 + i));
await writeFile(join(source, 'notes.txt'), 'small and compressible\n'.repeat(500));

interface StoredBlob extends PackedBlob {
  pack: string;
  /** the file whose content holds this blob */
  file?: string;
}

/** Every blob of the pristine repository with its pack and, for data, the file it belongs to. */
async function inventory(): Promise<{ blobs: StoredBlob[]; snapshotID: string }> {
  const repo = await Repository.init(new FsBackend(pristine), testPassword, { kdf: testKDF });
  // packs of 2 MiB hold two or more of the ~1 MiB file chunks whatever order they finish in, so some file blob
  // always sits past a pack's start (the tests below damage one there)
  const r = await backup(repo, { paths: [source], writer: { packSize: 2 << 20 } });
  const fileOf = new Map<string, string>();
  const stack = [r.snapshot.tree];
  while (stack.length > 0) {
    for (const node of decodeTree(await repo.loadBlob('tree', stack.pop()!))) {
      if (node.subtree) stack.push(node.subtree);
      for (const id of node.content ?? []) fileOf.set(id, Buffer.from(node.name).toString());
    }
  }
  const blobs: StoredBlob[] = [];
  for (const f of await packFiles(pristine)) {
    for (const b of await repo.readPackHeader(f.id, f.size)) blobs.push({ ...b, pack: f.id, file: fileOf.get(b.id) });
  }
  await repo.close();
  return { blobs, snapshotID: r.snapshotID };
}

const { blobs, snapshotID } = await inventory();

async function damagedCopy(name: string): Promise<string> {
  const path = join(work, name);
  await cp(pristine, path, { recursive: true });
  return path;
}

function packPath(repo: string, pack: string): string {
  return join(repo, 'data', pack.slice(0, 2), pack);
}

async function check(repo: string, ...flags: string[]): Promise<{ run: FerryRun; errors: string[] }> {
  const run = await ferry(['repo', 'check', '-r', repo, '--json', ...flags]);
  assert.ok(!hasStackTrace(run.stderr), `check printed a stack trace:\n${run.stderr}`);
  const errors = run.stdout.trim() === '' ? [] : parseJSON<{ errors: string[] }>(run).errors;
  return { run, errors };
}

function assertFailsClearly(run: FerryRun, ...mentions: string[]): void {
  assert.equal(run.code, 1, `exit code ${run.code}:\n${run.stderr}`);
  assert.ok(!hasStackTrace(run.stderr), `a stack trace instead of a message:\n${run.stderr}`);
  for (const m of mentions) assert.ok(run.stderr.includes(m), `the message does not name ${m}:\n${run.stderr}`);
}

async function resticFails(repo: string): Promise<void> {
  await assert.rejects(restic({ repo }, ['check', '--read-data']), /restic check --read-data failed/);
}

test('the pristine repository checks clean with ferry and restic', async () => {
  const { run, errors } = await check(pristine, '--read-data');
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(errors, []);
  await restic({ repo: pristine }, ['check', '--read-data']);
});

test('a flipped byte inside a data blob: check --read-data names the pack and the blob, restore refuses', async () => {
  const victim = blobs.find((b) => b.type === 'data' && b.file?.startsWith('file-') && b.offset > 0)!;
  const repo = await damagedCopy('flipped');
  await flipByte(packPath(repo, victim.pack), victim.offset + Math.floor(victim.length / 2));

  const structural = await check(repo);
  assert.equal(structural.run.code, 0, 'without --read-data the damage is invisible: sizes and index agree');

  const { run, errors } = await check(repo, '--read-data');
  assert.equal(run.code, 1);
  assert.ok(
    errors.some((e) => e.includes(victim.pack) && e.includes(victim.id)),
    `no error names pack and blob: ${errors.join('\n')}`,
  );
  assert.ok(
    errors.every((e) => e.includes(victim.pack)),
    'only the damaged pack is reported',
  );
  assertFailsClearly(await ferry(['repo', 'check', '-r', repo, '--read-data']), victim.pack, victim.id);

  const target = join(work, 'flipped-restore');
  assertFailsClearly(
    await ferry(['repo', 'restore', '-r', repo, snapshotID, '--target', target]),
    victim.pack,
    victim.id,
  );
  // no file may be left looking complete while it holds anything but the original bytes
  const original = await readFile(join(source, victim.file!));
  const restored = await readFile(join(target, source, victim.file!)).catch(() => undefined);
  assert.ok(
    restored === undefined || restored.equals(original),
    `the failed restore left ${victim.file} with wrong content`,
  );
  await resticFails(repo);
});

test('a truncated pack: check names it (with and without --read-data), restore fails naming it', async () => {
  const victim = blobs.find((b) => b.type === 'data' && b.offset > 0)!;
  const repo = await damagedCopy('truncated-pack');
  const path = packPath(repo, victim.pack);
  await truncateFile(path, Math.floor((await stat(path)).size / 2));

  for (const flags of [[], ['--read-data']]) {
    const { run, errors } = await check(repo, ...flags);
    assert.equal(run.code, 1, `check ${flags.join(' ')}: ${run.stderr}`);
    assert.ok(
      errors.some((e) => e.includes(victim.pack)),
      `check ${flags.join(' ')} does not name the pack: ${errors.join('\n')}`,
    );
  }
  const target = join(work, 'truncated-restore');
  assertFailsClearly(await ferry(['repo', 'restore', '-r', repo, snapshotID, '--target', target]), victim.pack);
  await resticFails(repo);
});

test('a deleted pack: check names it as missing, restore fails naming it', async () => {
  const victim = blobs.find((b) => b.type === 'data')!;
  const repo = await damagedCopy('missing-pack');
  await unlink(packPath(repo, victim.pack));
  const { run, errors } = await check(repo);
  assert.equal(run.code, 1);
  assert.ok(
    errors.some((e) => e.includes(victim.pack) && e.includes('missing')),
    errors.join('\n'),
  );
  const target = join(work, 'missing-restore');
  assertFailsClearly(await ferry(['repo', 'restore', '-r', repo, snapshotID, '--target', target]), victim.pack);
});

test('a truncated index file: check reports it by name, exit 1, no stack trace', async () => {
  const repo = await damagedCopy('truncated-index');
  const [index] = await storedFiles(repo, 'index');
  await truncateFile(index.path, Math.floor(index.size / 2));
  const { run } = await check(repo, '--read-data');
  assertFailsClearly(run, index.id.slice(0, 8));
  await resticFails(repo);
});

test('a truncated snapshot file: check reports it by name, exit 1', async () => {
  const repo = await damagedCopy('truncated-snapshot');
  const [snap] = await storedFiles(repo, 'snapshots');
  await truncateFile(snap.path, 20);
  const { run, errors } = await check(repo);
  assert.equal(run.code, 1, run.stderr);
  assert.ok(!hasStackTrace(run.stderr));
  assert.ok(
    errors.some((e) => e.includes(snap.id.slice(0, 8))),
    errors.join('\n'),
  );
});
