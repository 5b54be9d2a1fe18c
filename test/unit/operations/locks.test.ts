// The engine's operations hold the lock their work needs for as long as it runs, remove it however the work ends,
// and stop when someone removes it under them; and nothing outside the engine reaches past them to the unlocked work.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { decodeLock, Lock, LockConflictError, LockLostError } from '../../../src/engine/lock/lock.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { check } from '../../../src/engine/operations/check.ts';
import { forget } from '../../../src/engine/operations/forget.ts';
import { addKey } from '../../../src/engine/operations/key.ts';
import { restore } from '../../../src/engine/operations/restore.ts';
import { snapshots } from '../../../src/engine/operations/snapshots.ts';
import { lockStore } from '../../../src/engine/repository/lock-store.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { SnapshotNotFoundError } from '../../../src/engine/snapshot/select.ts';
import { makeFixtureTree } from '../../support/fixture-tree.ts';
import { gated } from '../../support/gated-backend.ts';
import { testKDF, testPassword, testPolynomial } from '../../support/repo.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-op-locks-'));
after(() => rm(scratch, { recursive: true, force: true }));
const source = join(scratch, 'source');
await makeFixtureTree(source, { smallFiles: 20, bigFile: 1 << 20 });
const backend = new MemBackend();
const snapshot = await (async () => {
  const repo = await Repository.init(backend, testPassword, { kdf: testKDF, polynomial: testPolynomial });
  return (await backup(repo, { paths: [source] })).snapshotID;
})();

async function locks(): Promise<{ exclusive: boolean }[]> {
  const store = lockStore(await Repository.open(backend, testPassword));
  const found = [];
  for await (const id of store.list()) found.push(decodeLock(await store.load(id)));
  return found;
}

test('a restore holds a shared lock while it reads and removes it when aborted or failed', async () => {
  const gate = gated(backend);
  const ac = new AbortController();
  const restoring = restore(await Repository.open(gate.view, testPassword), {
    snapshot,
    target: { kind: 'directory', path: join(scratch, 'r1') },
    signal: ac.signal,
  });
  await gate.reading;
  assert.deepEqual(
    (await locks()).map((l) => l.exclusive),
    [false],
  );
  ac.abort(new Error('stopped by the test'));
  gate.open();
  await assert.rejects(restoring, /stopped by the test/);
  assert.deepEqual(await locks(), [], 'an aborted restore leaves no lock');

  await assert.rejects(
    restore(await Repository.open(backend, testPassword), {
      snapshot: 'deadbeef',
      target: { kind: 'directory', path: join(scratch, 'r2') },
    }),
    SnapshotNotFoundError,
  );
  assert.deepEqual(await locks(), [], 'a failed restore leaves no lock');
});

test("a check holds the exclusive lock while it reads the data, as restic's does", async () => {
  const gate = gated(backend);
  const checking = check(await Repository.open(gate.view, testPassword), { readData: true });
  await gate.reading;
  assert.deepEqual(
    (await locks()).map((l) => l.exclusive),
    [true],
  );
  gate.open();
  assert.deepEqual((await checking).errors, []);
  assert.deepEqual(await locks(), []);
});

test('a restore whose lock is removed under it (an unlock) stops, saying so, rather than read beside a prune', async () => {
  const gate = gated(backend);
  const restoring = restore(await Repository.open(gate.view, testPassword), {
    snapshot,
    target: { kind: 'directory', path: join(scratch, 'r3') },
    lockRefreshMs: 50,
  });
  await gate.reading;
  const store = lockStore(await Repository.open(backend, testPassword));
  for await (const id of store.list()) await store.remove(id);
  await new Promise((r) => setTimeout(r, 300));
  gate.open();
  await assert.rejects(
    restoring,
    (err: Error) => err instanceof LockLostError && /was removed by someone else/.test(err.message),
  );
  assert.deepEqual(await locks(), []);
});

test("listing snapshots and adding a key wait for a prune or check to end, as restic's do: each takes a shared lock", async () => {
  const held = await Lock.acquire(lockStore(await Repository.open(backend, testPassword)), { exclusive: true });
  try {
    const repo = await Repository.open(backend, testPassword);
    await assert.rejects(snapshots(repo), LockConflictError);
    await assert.rejects(addKey(repo, 'another password'), LockConflictError);
  } finally {
    await held.release();
  }
  const repo = await Repository.open(backend, testPassword);
  assert.deepEqual(
    (await snapshots(repo)).map((e) => e.id),
    [snapshot],
  );
  await addKey(repo, 'another password');
  await Repository.open(backend, 'another password');
  assert.deepEqual(await locks(), []);
});

test('a backup that finds its own earlier snapshot under the lock takes it; a forget chooses what to remove under its lock', async () => {
  const repo = await Repository.open(backend, testPassword);
  const taken = await backup(repo, { paths: [source], saved: (all) => all.find((e) => e.id === snapshot) });
  assert.ok('taken' in taken && taken.taken.id === snapshot);
  const extra = await backup(repo, { paths: [source], parent: (all) => all.find((e) => e.id === snapshot) });
  assert.equal(extra.snapshot.parent, snapshot);
  const { removed } = await forget(repo, (all) => all.filter((e) => e.id !== snapshot).map((e) => e.id));
  assert.deepEqual(removed, [extra.snapshotID]);
  assert.deepEqual(
    (await snapshots(repo)).map((e) => e.id),
    [snapshot],
  );
  assert.deepEqual(await locks(), []);
});

test('a forget that finds nothing to remove does not wait for the backups beside it; one that finds some does', async () => {
  const held = await Lock.acquire(lockStore(await Repository.open(backend, testPassword)), { exclusive: false });
  try {
    const repo = await Repository.open(backend, testPassword);
    assert.deepEqual(
      await forget(repo, (all) => all.filter((e) => e.snapshot.tags.includes('none-has-it')).map((e) => e.id)),
      { removed: [], retained: [] },
    );
    await assert.rejects(
      forget(repo, (all) => all.map((e) => e.id)),
      LockConflictError,
    );
  } finally {
    await held.release();
  }
  assert.deepEqual(
    (await snapshots(await Repository.open(backend, testPassword))).map((e) => e.id),
    [snapshot],
  );
  assert.deepEqual(await locks(), []);
});

/** Engine work that needs a lock its caller holds; only src/engine/operations/ may call it. */
const unlockedWork =
  /\b(backupLocked|pruneLocked|copyLocked|checkRepository|restoreTree|restoreStream|forgetSnapshots|listSnapshots|removeStaleLocks|lockStore|Lock\.acquire)\b|\.addKey\(/;

test('outside the engine, repository work goes through the operations: no caller reaches the unlocked work', async () => {
  const src = join(import.meta.dirname, '..', '..', '..', 'src');
  const callers: string[] = [];
  for (const dir of ['cli', 'steps', 'dispatcher', 'shared', 'entry']) {
    for (const file of await readdir(join(src, dir), { recursive: true })) {
      if (!file.endsWith('.ts') && !file.endsWith('.mjs')) continue;
      const text = await readFile(join(src, dir, file), 'utf8');
      for (const line of text.split('\n'))
        if (unlockedWork.test(line) && !line.trimStart().startsWith('//'))
          callers.push(`${relative(src, join(src, dir, file))}: ${line.trim()}`);
    }
  }
  assert.deepEqual(callers, []);
});
