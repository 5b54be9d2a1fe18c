// A copy from a hostile or damaged source fails naming the snapshot and what is wrong in it (the tree, the entry,
// the blob, the pack), and leaves no snapshot in the destination whose data did not all arrive: what it did write
// is data restic's check accepts, and a good snapshot still copies afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { CopyError } from '../../src/engine/copy/copy.ts';
import { hashID } from '../../src/engine/ids/id.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { copy } from '../../src/engine/operations/copy.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { listSnapshots } from '../../src/engine/repository/snapshots.ts';
import { goMode } from '../../src/engine/tree/mode.ts';
import { newNode } from '../../src/engine/tree/node.ts';
import { RawTreeWriter } from '../support/hostile-repo.ts';
import { flipByte, packFiles } from '../support/repo-files.ts';
import { randomBytes, testKDF, testPassword, testPolynomial } from '../support/repo.ts';
import { restic } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-copy-hostile-'));
test.after(() => rm(work, { recursive: true, force: true }));
const otherPassword = 'the destination password';

const data = join(work, 'data');
await writeFile(data, randomBytes(2 << 20, 3));

async function repository(name: string, password = testPassword): Promise<{ path: string; repo: Repository }> {
  const path = join(work, name);
  return {
    path,
    repo: await Repository.init(new FsBackend(path), password, { kdf: testKDF, polynomial: testPolynomial }),
  };
}

const open = (path: string, password = testPassword) => Repository.open(new FsBackend(path), password);

/** A source with a good snapshot and one whose subtree `sub` holds `entries` (built by the callback). */
async function sourceWith(
  name: string,
  entries: (w: RawTreeWriter) => Promise<ReturnType<typeof newNode>[]>,
): Promise<{ path: string; good: string; bad: string; badTree: string }> {
  const { path, repo } = await repository(name);
  const good = (await backup(repo, { paths: [data] })).snapshotID;
  const w = new RawTreeWriter(repo);
  const badTree = await w.tree(await entries(w));
  const root = await w.tree([
    newNode(Buffer.from('sub'), 'dir', { mode: (goMode.dir | 0o755) >>> 0, subtree: badTree }),
  ]);
  return { path, good, bad: await w.snapshot(root), badTree };
}

/** Copies `bad`, expecting `message`; then the destination holds no snapshot, passes restic's check, and takes `good`. */
async function refusedThenGood(src: { path: string; good: string; bad: string }, message: RegExp): Promise<void> {
  const dst = await repository(`dst-${src.bad.slice(0, 8)}`, otherPassword);
  await assert.rejects(copy(await open(src.path), dst.repo, { snapshots: [src.bad] }), (err: Error) => {
    assert.ok(err instanceof CopyError, err.stack);
    assert.match(err.message, new RegExp(`^snapshot ${src.bad.slice(0, 8)} cannot be copied: `));
    assert.match(err.message, message);
    return true;
  });
  const reopened = await open(dst.path, otherPassword);
  assert.deepEqual(await listSnapshots(reopened), [], 'no snapshot without its data');
  await restic({ repo: dst.path, password: otherPassword }, ['check', '--read-data']);
  const r = await copy(await open(src.path), reopened, { snapshots: [src.good] });
  assert.deepEqual(
    r.snapshots.map((s) => s.skipped),
    [false],
  );
  await restic({ repo: dst.path, password: otherPassword }, ['check', '--read-data']);
}

test('a tree naming a data blob that neither repository holds fails the copy naming the snapshot, tree, entry and blob', async () => {
  const missing = hashID(Buffer.from('never stored'));
  const src = await sourceWith('missing-blob', async (w) => [
    newNode(Buffer.from('fine'), 'file', { mode: 0o644, size: 5n, content: [await w.data(Buffer.from('fine\n'))] }),
    newNode(Buffer.from('lost'), 'file', { mode: 0o644, size: 5n, content: [missing] }),
  ]);
  await refusedThenGood(
    src,
    new RegExp(`tree ${src.badTree}: entry "lost" references data blob ${missing}, which neither repository holds`),
  );
});

test("a tree breaking restic's invariants (a name twice) fails the copy naming the tree", async () => {
  const src = await sourceWith('invalid-tree', async (w) => {
    const content = [await w.data(Buffer.from('twice\n'))];
    return [
      newNode(Buffer.from('a'), 'file', { mode: 0o644, content }),
      newNode(Buffer.from('a'), 'file', { mode: 0o644, content }),
    ];
  });
  await refusedThenGood(src, new RegExp(`tree ${src.badTree} is invalid: entry "a": the name appears twice`));
});

test('a data blob damaged in its source pack fails the copy naming the pack and the blob', async () => {
  const src = await sourceWith('damaged', async (w) => [
    newNode(Buffer.from('hurt'), 'file', { mode: 0o644, size: 4096n, content: [await w.data(randomBytes(4096, 9))] }),
  ]);
  const repo = await open(src.path);
  await repo.loadIndex();
  const blob = hashID(randomBytes(4096, 9));
  const at = repo.index.get(blob, 'data')!;
  const pack = (await packFiles(src.path)).find((p) => p.id === at.pack)!;
  await flipByte(pack.path, at.offset + 100);
  await refusedThenGood(src, new RegExp(`corrupted pack ${at.pack} holding blob ${blob}`));
});

test('a snapshot whose root tree is nowhere fails the copy naming the tree', async () => {
  const { path, repo } = await repository('no-root');
  const good = (await backup(repo, { paths: [data] })).snapshotID;
  const root = hashID(Buffer.from('no such tree'));
  const bad = await new RawTreeWriter(repo).snapshot(root);
  await refusedThenGood({ path, good, bad }, new RegExp(`tree blob ${root} is not in any index`));
});
