import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Lock,
  LockConflictError,
  encodeLock,
  newLockInfo,
  removeStaleLocks,
  staleReason,
  staleAfterMs,
} from '../../../src/engine/lock/lock.ts';
import { lockStore } from '../../../src/engine/repository/lock-store.ts';
import { testRepo } from '../../support/repo.ts';

test('shared locks coexist; an exclusive lock waits for them and is refused while they live', async () => {
  const store = lockStore(await testRepo());
  const a = await Lock.acquire(store, { exclusive: false });
  const b = await Lock.acquire(store, { exclusive: false });
  await assert.rejects(
    Lock.acquire(store, { exclusive: true }),
    (err: Error) => err instanceof LockConflictError && /locked by .*a shared lock since/.test(err.message),
  );
  await a.release();
  await b.release();
  const x = await Lock.acquire(store, { exclusive: true });
  await assert.rejects(Lock.acquire(store, { exclusive: false }), LockConflictError);
  await x.release();
});

test('staleness: too old, or a dead process on this host; live otherwise', () => {
  const now = new Date('2026-01-01T12:00:00Z');
  const base = { ...newLockInfo(false, now), hostname: 'node-a', pid: 42 };
  const alive = () => true;
  const dead = () => false;
  assert.equal(staleReason(base, now, 'node-a', alive), '');
  assert.match(staleReason(base, now, 'node-a', dead), /process 42 on node-a is gone/);
  assert.equal(staleReason(base, now, 'node-b', dead), '', 'a process on another host cannot be checked');
  const old = { ...base, time: new Date(now.getTime() - staleAfterMs - 1000) };
  assert.match(staleReason(old, now, 'node-b', alive), /last refreshed 30 minutes ago/);
});

test('stale locks are ignored by acquire and removed by removeStaleLocks', async () => {
  const store = lockStore(await testRepo());
  const stale = { ...newLockInfo(true), time: new Date(Date.now() - staleAfterMs - 60_000) };
  const id = await store.save(encodeLock(stale));
  const l = await Lock.acquire(store, { exclusive: true });
  const removed = await removeStaleLocks(store);
  assert.deepEqual(
    removed.map((r) => r.id),
    [id],
  );
  await l.release();
  const left: string[] = [];
  for await (const x of store.list()) left.push(x);
  assert.deepEqual(left, []);
});

test('refresh replaces the lock file', async () => {
  const store = lockStore(await testRepo());
  const l = await Lock.acquire(store, { exclusive: false });
  const before = l.id;
  await new Promise((r) => setTimeout(r, 5));
  await l.refresh();
  assert.notEqual(l.id, before);
  const left: string[] = [];
  for await (const x of store.list()) left.push(x);
  assert.deepEqual(left, [l.id]);
  await l.release();
});
