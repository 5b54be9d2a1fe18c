// Incremental backups: a directory whose entries are all as the parent recorded them keeps the parent's tree id
// (reused without re-encoding), while a changed entry gives its directory and every ancestor a new tree, whose
// nodes say what changed, and leaves untouched siblings alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { backup, type BackupResult } from '../../../src/engine/operations/backup.ts';
import { decodeTree, encodeTree } from '../../../src/engine/tree/tree.ts';
import { encodeNode } from '../../../src/engine/tree/nodejson.ts';
import { hashID } from '../../../src/engine/ids/id.ts';
import { prepareBlob } from '../../../src/engine/pack/prepare.ts';
import type { TreeNode } from '../../../src/engine/tree/node.ts';
import type { Repository } from '../../../src/engine/repository/repository.ts';
import { testRepo } from '../../support/repo.ts';

/** The node at `path` (relative to the backed-up folder `dir`) in a snapshot, following the absolute path down. */
async function nodeAt(repo: Repository, r: BackupResult, dir: string, path: string): Promise<TreeNode> {
  let tree = r.snapshot.tree;
  let node: TreeNode | undefined;
  for (const part of [...dir.split('/'), ...path.split('/')].filter(Boolean)) {
    node = decodeTree(await repo.loadBlob('tree', tree)).find((n) => Buffer.from(n.name).toString() === part);
    assert.ok(node, `${part} is in the snapshot`);
    tree = node.subtree ?? '';
  }
  return node!;
}

test('unchanged directories keep their tree ids; a changed file renews its directory and ancestors only', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-incr-'));
  try {
    for (const d of ['a', 'a/deep', 'b']) await mkdir(join(dir, d));
    for (const f of ['a/deep/x', 'a/y', 'b/z']) await writeFile(join(dir, f), `content of ${f}`);
    const repo = await testRepo(new MemBackend());
    const first = await backup(repo, { paths: [dir] });
    const parent = { id: 'parent', snapshot: first.snapshot };

    const same = await backup(repo, { paths: [dir], parent });
    // the folders above dir (/tmp) may change between runs; dir itself must not
    assert.equal((await nodeAt(repo, same, dir, '')).subtree, (await nodeAt(repo, first, dir, '')).subtree);
    assert.equal(same.archive.counters.filesUnmodified, 3);
    assert.equal(same.archive.counters.dirsChanged, 0);

    const when = new Date('2024-05-01T10:00:00Z');
    await utimes(join(dir, 'a/deep/x'), when, when);
    const changed = await backup(repo, { paths: [dir], parent });
    assert.equal(changed.archive.counters.filesUnmodified, 2);
    assert.equal(changed.archive.counters.filesChanged, 1);
    for (const d of ['a', 'a/deep']) {
      assert.notEqual(
        (await nodeAt(repo, changed, dir, d)).subtree,
        (await nodeAt(repo, first, dir, d)).subtree,
        `${d} has a new tree`,
      );
    }
    assert.equal(
      (await nodeAt(repo, changed, dir, 'b')).subtree,
      (await nodeAt(repo, first, dir, 'b')).subtree,
      'b keeps its tree',
    );
    assert.equal((await nodeAt(repo, changed, dir, 'a/deep/x')).mtime.ns, BigInt(when.getTime()) * 1_000_000n);
    assert.notEqual((await nodeAt(repo, changed, dir, '')).subtree, (await nodeAt(repo, first, dir, '')).subtree);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a symlinked folder above a backed-up path is recorded as the folder it points to, and the next backup finds its parent', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-incr-link-'));
  try {
    await mkdir(join(dir, 'real/data'), { recursive: true });
    for (const f of ['one', 'two']) await writeFile(join(dir, 'real/data', f), `content of ${f}`);
    await symlink('real', join(dir, 'link'));
    const path = join(dir, 'link/data');
    const repo = await testRepo(new MemBackend());
    const first = await backup(repo, { paths: [path] });
    // followed, as restic follows it: a symlink node could not hold the files below it for a restore
    assert.equal((await nodeAt(repo, first, join(dir, 'link'), '')).type, 'dir');
    const again = await backup(repo, { paths: [path], parent: { id: 'parent', snapshot: first.snapshot } });
    assert.equal(again.archive.counters.filesUnmodified, 2);
    assert.equal(again.archive.counters.filesNew, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a parent chosen from the snapshots listed under the lock is followed, and one that cannot be found fails the run without a lock or snapshot left', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-incr-'));
  try {
    await writeFile(join(dir, 'f'), 'content');
    const repo = await testRepo(new MemBackend());
    const first = await backup(repo, { paths: [dir] });
    const same = await backup(repo, {
      paths: [dir],
      parent: (snapshots) => snapshots.find((e) => e.id === first.snapshotID),
    });
    assert.equal(same.snapshot.parent, first.snapshotID);
    assert.equal(same.archive.counters.filesUnmodified, 1);

    await assert.rejects(
      backup(repo, {
        paths: [dir],
        parent: () => {
          throw new Error('no snapshot matches "abc"');
        },
      }),
      /no snapshot matches/,
    );
    const locks: string[] = [];
    for await (const id of repo.list('lock')) locks.push(id);
    assert.deepEqual(locks, []);
    const snapshots: string[] = [];
    for await (const id of repo.list('snapshot')) snapshots.push(id);
    assert.equal(snapshots.length, 2);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a parent whose tree breaks restic invariants is not trusted: the backup warns naming it and reads the files again', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-incr-hostile-'));
  try {
    for (const f of ['one', 'two']) await writeFile(join(dir, f), `content of ${f}`);
    const repo = await testRepo(new MemBackend());
    const first = await backup(repo, { paths: [dir] });
    // the parent's folder of `dir` as an attacker rewrote it: its entries twice over (a duplicate name)
    const good = decodeTree(await repo.loadBlob('tree', (await nodeAt(repo, first, dir, '')).subtree!));
    const bad = Buffer.from(`{"nodes":[${[...good, ...good].map(encodeNode).join(',')}]}\n`);
    const badID = hashID(bad);
    const writer = repo.writer();
    writer.claim('tree', badID);
    await writer.add(prepareBlob(repo.key, 'tree', badID, bad, true), bad.length);
    await writer.flush();
    const parentTree = await rewritePath(repo, first.snapshot.tree, dir.split('/').filter(Boolean), badID);

    const warnings: string[] = [];
    const again = await backup(repo, {
      paths: [dir],
      parent: { id: 'parent', snapshot: { ...first.snapshot, tree: parentTree } },
      onWarning: (m) => warnings.push(m),
    });
    assert.ok(
      warnings.some((w) => w.includes(badID) && w.includes('"one"')),
      `no warning names tree ${badID}: ${warnings.join('\n')}`,
    );
    assert.equal(again.archive.counters.filesUnmodified, 0, 'nothing taken from the invalid tree');
    assert.equal(again.archive.counters.filesNew, 2);
    assert.equal(
      (await nodeAt(repo, again, dir, '')).subtree,
      (await nodeAt(repo, first, dir, '')).subtree,
      'the new snapshot is the valid tree again',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A copy of the tree `root` whose folder at `path` has subtree `leaf`, each tree above it re-encoded and stored. */
async function rewritePath(repo: Repository, root: string, path: string[], leaf: string): Promise<string> {
  if (path.length === 0) return leaf;
  const nodes = decodeTree(await repo.loadBlob('tree', root));
  const at = nodes.findIndex((n) => Buffer.from(n.name).toString() === path[0]);
  nodes[at] = { ...nodes[at], subtree: await rewritePath(repo, nodes[at].subtree!, path.slice(1), leaf) };
  const bytes = encodeTree(nodes);
  const id = hashID(bytes);
  const writer = repo.writer();
  if (writer.claim('tree', id)) await writer.add(prepareBlob(repo.key, 'tree', id, bytes, true), bytes.length);
  await writer.flush();
  return id;
}
