// A prune in a repository where S3 Object Lock retains some files (a backend whose removals of them reject with a
// LockedError, as the S3 backend's do): it removes what it may, reports what it kept with the date, and never leaves
// an index naming a pack it deleted: packs a retained index file names stay until that file can go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, Handle } from '../../../src/engine/backend/backend.ts';
import { LockedError } from '../../../src/engine/backend/errors.ts';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { check } from '../../../src/engine/operations/check.ts';
import { forget } from '../../../src/engine/operations/forget.ts';
import { prune } from '../../../src/engine/operations/prune.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { randomBytes, testKDF, testPassword, testPolynomial } from '../../support/repo.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-prune-retained-'));
test.after(() => rm(work, { recursive: true, force: true }));

/** The backend, refusing to remove the files `retained` holds, as Object Lock does until `until`. */
function retaining(inner: Backend, retained: Set<string>, until: Date): Backend {
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'remove') {
        return async (h: Handle) => {
          if (retained.has(h.name)) throw new LockedError(target.location, h, until);
          return target.remove(h);
        };
      }
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

async function files(backend: Backend, type: 'index' | 'pack' | 'snapshot'): Promise<string[]> {
  const out: string[] = [];
  for await (const f of backend.list(type)) out.push(f.name);
  return out.sort();
}

test('packs a retained index file names stay; the rest goes, and the repository checks clean', async () => {
  const mem = new MemBackend('mem:retained');
  const retained = new Set<string>();
  const until = new Date(Date.now() + 3600_000);
  const backend = retaining(mem, retained, until);
  const repo = await Repository.init(backend, testPassword, { kdf: testKDF, polynomial: testPolynomial });
  const dirs = ['kept', 'gone'].map((d) => join(work, d));
  for (const [i, dir] of dirs.entries()) {
    await mkdir(dir);
    await writeFile(join(dir, 'f'), randomBytes(2 << 20, 20 + i));
  }
  await backup(repo, { paths: [dirs[0]] });
  const indexOfKept = await files(mem, 'index');
  const packsOfKept = await files(mem, 'pack');
  const gone = (await backup(repo, { paths: [dirs[1]] })).snapshotID;
  const packsOfGone = (await files(mem, 'pack')).filter((p) => !packsOfKept.includes(p));
  const indexOfGone = (await files(mem, 'index')).filter((p) => !indexOfKept.includes(p));
  // the second backup's index file is retained, its packs are not
  for (const id of indexOfGone) retained.add(id);

  const r = await forget(repo, [gone], { prune: {} });
  assert.deepEqual(r.removed, [gone]);
  assert.deepEqual(
    r.pruned!.retained.map((f) => [f.type, f.name, f.until]),
    indexOfGone.map((id) => ['index', id, until]),
  );
  assert.equal(r.pruned!.packsDeleted, 0, 'the packs the retained index names stay');
  assert.deepEqual(await files(mem, 'pack'), [...packsOfKept, ...packsOfGone].sort());
  const reopened = await Repository.open(backend, testPassword);
  assert.deepEqual((await check(reopened, { readData: true })).errors, []);

  // once the index file's retention ends, the next prune frees it and its packs
  retained.clear();
  const later = await prune(reopened);
  assert.deepEqual(later.retained, []);
  assert.equal(later.packsDeleted, packsOfGone.length);
  assert.deepEqual(await files(mem, 'pack'), packsOfKept);
  assert.deepEqual((await check(await Repository.open(backend, testPassword), { readData: true })).errors, []);
});
