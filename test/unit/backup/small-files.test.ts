import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { SmallBatches } from '../../../src/engine/backup/small-batches.ts';
import type { SmallBatchResult } from '../../../src/engine/backup/pool.ts';
import { decodeTree } from '../../../src/engine/tree/tree.ts';
import type { TreeNode } from '../../../src/engine/tree/node.ts';
import type { Repository } from '../../../src/engine/repository/repository.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Every file node below `tree`, by path relative to it. */
async function filesOf(repo: Repository, tree: string, prefix = ''): Promise<Map<string, TreeNode>> {
  const out = new Map<string, TreeNode>();
  for (const n of decodeTree(await repo.loadBlob('tree', tree))) {
    const path = `${prefix}/${Buffer.from(n.name).toString()}`;
    if (n.type === 'dir') for (const [p, f] of await filesOf(repo, n.subtree!, path)) out.set(p, f);
    else if (n.type === 'file') out.set(path, n);
  }
  return out;
}

/** The snapshot mirrors the absolute path: the tree of the backed-up folder, found by walking down from the root. */
async function folderTree(repo: Repository, root: string, dir: string): Promise<string> {
  let tree = root;
  for (const part of dir.split('/').filter(Boolean)) {
    const node = decodeTree(await repo.loadBlob('tree', tree)).find((n) => Buffer.from(n.name).toString() === part);
    tree = node!.subtree!;
  }
  return tree;
}

test('small files stored in batches: each distinct content once, ids and sizes right, the same tree every run', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-small-'));
  try {
    // 300 files over 3 folders (several batches), 7 distinct contents: duplicates inside a batch and across them
    const contents = [new Uint8Array(0), ...Array.from({ length: 6 }, (_, i) => randomBytes(100 + i * 5000, i + 1))];
    const expected = new Map<string, Uint8Array>();
    for (let d = 0; d < 3; d++) {
      await mkdir(join(dir, `d${d}`));
      for (let i = 0; i < 100; i++) {
        const data = contents[(d * 100 + i) % contents.length];
        await writeFile(join(dir, `d${d}`, `f${String(i).padStart(3, '0')}`), data);
        expected.set(`/d${d}/f${String(i).padStart(3, '0')}`, data);
      }
    }
    const repo = await testRepo(new MemBackend());
    const first = await backup(repo, { paths: [dir] });
    assert.equal(first.stats.dataBlobs, contents.length - 1, 'one data blob per distinct non-empty content');
    assert.equal(first.archive.counters.filesNew, 300);
    const tree = await folderTree(repo, first.snapshot.tree, dir);
    const files = await filesOf(repo, tree);
    assert.equal(files.size, expected.size);
    for (const [path, data] of expected) {
      const node = files.get(path)!;
      assert.equal(node.size, BigInt(data.length), path);
      assert.deepEqual(node.content, data.length === 0 ? [] : [sha(data)], path);
      if (data.length > 0) assert.ok(Buffer.from(await repo.loadBlob('data', sha(data))).equals(data), path);
    }
    const second = await backup(repo, { paths: [dir] });
    // the folder's tree, not the root's: the root holds the temp folder's times, which other tests change
    assert.equal(await folderTree(repo, second.snapshot.tree, dir), tree, 'a second run builds the same tree');
    assert.equal(second.stats.dataBlobs, 0, 'nothing new the second time');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a batch leaves when full by count or by bytes, or when flushed, and no more than inFlight run at once', async () => {
  const sent: number[] = [];
  let running = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const run = async (paths: Uint8Array[]): Promise<SmallBatchResult> => {
    sent.push(paths.length);
    running++;
    most = Math.max(most, running);
    await new Promise<void>((r) => release.push(r));
    running--;
    return { files: paths.map((p) => ({ id: Buffer.from(p).toString(), size: 1 })), added: paths.length };
  };
  let added = 0;
  const batches = new SmallBatches(run, { files: 4, bytes: 1000, inFlight: 2 }, (n) => {
    added += n;
  });
  const done: Promise<{ id: string }>[] = [];
  const admitted: Promise<void>[] = [];
  // 4 files fill a batch by count; then 2 files of 600 bytes fill one by bytes; the third batch waits for a slot
  const sizes = [1, 1, 1, 1, 600, 600, 1];
  for (const [i, size] of sizes.entries()) {
    admitted.push(
      batches.add(Buffer.from(`f${i}`), size).then((a) => {
        done[i] = a.done;
      }),
    );
  }
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent, [4, 2], 'a partial batch waits for more files');
  const flushed = batches.flush();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent, [4, 2], 'the flushed batch waits for a free slot');
  release.shift()!();
  await flushed;
  await Promise.all(admitted);
  assert.deepEqual(sent, [4, 2, 1]);
  while (release.length > 0 || running > 0) {
    release.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  assert.deepEqual(
    (await Promise.all(done)).map((f) => f.id),
    sizes.map((_, i) => `f${i}`),
  );
  assert.equal(most, 2);
  assert.equal(added, 7);
});

test('a backup of many small files canceled midway stops with an AbortError and writes no snapshot', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-small-cancel-'));
  try {
    for (let d = 0; d < 10; d++) {
      await mkdir(join(dir, `d${d}`));
      for (let i = 0; i < 200; i++) await writeFile(join(dir, `d${d}`, `f${i}`), randomBytes(2000, d * 1000 + i + 1));
    }
    const repo = await testRepo(new MemBackend());
    const ac = new AbortController();
    let filesAtAbort = 0;
    const run = backup(repo, {
      paths: [dir],
      signal: ac.signal,
      onProgress: (p) => {
        if (p.filesDone > 0 && filesAtAbort === 0) {
          filesAtAbort = p.filesDone;
          ac.abort(Object.assign(new Error('canceled by the test'), { name: 'AbortError' }));
        }
      },
    });
    await assert.rejects(run, (err: Error) => err.name === 'AbortError');
    assert.ok(filesAtAbort > 0 && filesAtAbort < 2000, `canceled after ${filesAtAbort} of 2000 files`);
    const snapshots: string[] = [];
    for await (const id of repo.list('snapshot')) snapshots.push(id);
    assert.deepEqual(snapshots, []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
