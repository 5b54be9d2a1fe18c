import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackupPool } from '../../../src/engine/backup/pool.ts';
import { formatPolynomial } from '../../../src/engine/chunker/polynomial.ts';
import type { Repository } from '../../../src/engine/repository/repository.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';

/** `count` files of `size` random bytes in a new folder. */
async function files(count: number, size: number): Promise<{ dir: string; paths: Uint8Array[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-pool-'));
  const paths: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const path = join(dir, `f${i}`);
    await writeFile(path, randomBytes(size, i + 1));
    paths.push(Buffer.from(path));
  }
  return { dir, paths };
}

/** `busyAbove` 1: no thread is ever busy enough to start another; 0 (and no spare core asked for): any work is. */
function pool(repo: Repository, busyAbove: number, size = 2, writer = repo.writer()): BackupPool {
  const init = { key: repo.key, polynomial: formatPolynomial(repo.config.chunkerPolynomial), compression: true };
  return new BackupPool(init, size, writer, { busyAbove, spareAtLeast: busyAbove === 0 ? -Infinity : 0.5 });
}

/** Sends batches of `per` paths, `inFlight` at a time, as the archiver does. */
async function batches(p: BackupPool, paths: Uint8Array[], per: number, inFlight: number): Promise<number> {
  let next = 0;
  let stored = 0;
  const lane = async (): Promise<void> => {
    while (next < paths.length) {
      const batch = paths.slice(next, next + per);
      next += per;
      const done = await p.backupSmallFiles(batch);
      stored += done.files.length;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return stored;
}

test('batches of small files start a second thread only while the first is the limit and a core is spare', async () => {
  const repo = await testRepo();
  const { dir, paths } = await files(600, 100);
  try {
    // while the first thread is not the limit, the batches keep to it, however many wait
    const calm = pool(repo, 1);
    try {
      assert.equal(await batches(calm, paths, 8, 8), paths.length);
      assert.equal(calm.threads, 1);
    } finally {
      await calm.close();
    }
    // once it is, over a long enough stretch after its first batch, a second thread starts
    const eager = pool(repo, 0);
    try {
      const started = Date.now();
      while (eager.threads < 2 && Date.now() - started < 30_000) await batches(eager, paths, 8, 8);
      assert.equal(eager.threads, 2);
    } finally {
      await eager.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('whole files start a thread each while the others are occupied, up to the pool size', async () => {
  const repo = await testRepo();
  const { dir, paths } = await files(4, 1 << 20);
  try {
    const p = pool(repo, 1);
    try {
      const sizes = await Promise.all(paths.map((path) => p.backupFile(path)));
      assert.deepEqual(
        sizes.map((s) => s.size),
        [1 << 20, 1 << 20, 1 << 20, 1 << 20],
      );
      assert.equal(p.threads, 2);
    } finally {
      await p.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a pool told to run here stores files on this thread, with the blobs a thread stores, and starts no thread', async () => {
  const repo = await testRepo();
  const { dir, paths } = await files(3, 3 << 20);
  try {
    const here = pool(repo, 1);
    const threaded = pool(repo, 1);
    try {
      await here.runHere();
      const onThisThread = await Promise.all(paths.map((path) => here.backupFile(path)));
      // a file that cannot be read fails its job, not the process it runs in
      await assert.rejects(here.backupFile(Buffer.from(join(dir, 'missing'))), /no such file/);
      assert.equal(here.threads, 0);
      assert.deepEqual(await Promise.all(paths.map((path) => threaded.backupFile(path))), onThisThread);
      assert.equal(onThisThread[0].size, 3 << 20);
    } finally {
      await Promise.all([here.close(), threaded.close()]);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('one large file keeps two threads busy: the other seals chunks it sets aside, and the content is the same', async () => {
  const repo = await testRepo();
  const { dir, paths } = await files(1, 24 << 20);
  try {
    const two = pool(repo, 1);
    const one = pool(repo, 1, 1);
    try {
      const [aside, alone] = [await two.backupFile(paths[0]), await one.backupFile(paths[0])];
      assert.deepEqual(aside, alone);
      assert.ok(two.setAside > 0, 'some chunks were sealed by the other thread');
      assert.equal(two.threads, 2);
      assert.equal(one.setAside, 0, 'a pool of one seals its own');
    } finally {
      await Promise.all([two.close(), one.close()]);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a large file resolves only once every chunk it set aside is in the pack writer; a cancel still ends it', async () => {
  const repo = await testRepo();
  const { dir, paths } = await files(1, 24 << 20);
  try {
    const writer = repo.writer();
    const p = pool(repo, 1, 2, writer);
    try {
      const stored = await p.backupFile(paths[0]);
      assert.ok(p.setAside > 0);
      // every blob of the content was added, none merely claimed
      assert.equal(writer.stats.dataBlobs, new Set(stored.content).size);
      assert.equal(writer.stats.dataAdded, stored.size);
      const canceled = new AbortController();
      const other = await files(1, 24 << 20);
      try {
        const running = p.backupFile(other.paths[0], undefined, canceled.signal);
        setTimeout(() => canceled.abort(), 50);
        await assert.rejects(running, { name: 'AbortError' });
      } finally {
        await rm(other.dir, { recursive: true, force: true });
      }
    } finally {
      await p.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
