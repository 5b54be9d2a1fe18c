// The behaviour every Backend must show, registered as node:test tests for one backend factory.
// mem, fs and S3 (on MinIO) all run this same suite, so the engine can treat them alike.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { isPermanent } from '../../../src/engine/backend/backend.ts';
import type { Backend, FileInfo, FileType, Handle } from '../../../src/engine/backend/backend.ts';

export interface ContractTarget {
  name: string;
  /** A fresh, empty backend on which create() has not been called yet. */
  make(): Promise<Backend>;
}

const mib = 1024 * 1024;
const listedTypes: Exclude<FileType, 'config'>[] = ['key', 'lock', 'snapshot', 'index', 'pack'];

export function randomID(): string {
  return randomBytes(32).toString('hex');
}

export function handle(type: FileType, name = randomID()): Handle {
  return { type, name };
}

async function collect(b: Backend, type: FileType): Promise<FileInfo[]> {
  const out: FileInfo[] = [];
  for await (const info of b.list(type)) out.push(info);
  return out.sort((x, y) => x.name.localeCompare(y.name));
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail('expected the promise to reject');
}

/** Runs `fn` on a fresh created backend and always closes it. */
async function withBackend(target: ContractTarget, fn: (b: Backend) => Promise<void>): Promise<void> {
  const b = await target.make();
  try {
    await b.create();
    await fn(b);
  } finally {
    await b.close();
  }
}

export function backendContract(target: ContractTarget): void {
  describe(`backend contract: ${target.name}`, () => {
    const run = (fn: (b: Backend) => Promise<void>) => () => withBackend(target, fn);

    it(
      'saves and loads whole files of every type, config included',
      run(async (b) => {
        for (const type of [...listedTypes, 'config'] as const) {
          const h = handle(type);
          const data = randomBytes(1000 + listedTypes.indexOf(type as never));
          await b.save(h, data);
          assert.deepEqual(Buffer.from(await b.load(h)), data, type);
          assert.deepEqual(await b.stat(h), { name: h.name, size: data.length }, type);
        }
      }),
    );

    it(
      'loads byte ranges, and rejects ranges past the end as permanent, not as missing',
      run(async (b) => {
        const h = handle('pack');
        const data = randomBytes(4096);
        await b.save(h, data);
        assert.deepEqual(Buffer.from(await b.load(h, 100, 50)), data.subarray(100, 150));
        assert.deepEqual(Buffer.from(await b.load(h, 4000)), data.subarray(4000));
        assert.deepEqual(Buffer.from(await b.load(h, 0, 4096)), data);
        assert.equal((await b.load(h, 4096)).length, 0);
        for (const [offset, length] of [
          [4000, 200],
          [5000, 0],
          [4097, 1],
        ]) {
          const err = await rejection(b.load(h, offset, length));
          assert.ok(isPermanent(err), `range ${offset}+${length}: ${String(err)}`);
          assert.equal(b.isNotExist(err), false);
        }
      }),
    );

    it(
      'reports missing files through isNotExist for load and stat; removing them is success',
      run(async (b) => {
        const h = handle('snapshot');
        assert.ok(b.isNotExist(await rejection(b.load(h))));
        assert.ok(b.isNotExist(await rejection(b.load(h, 10, 10))));
        assert.ok(b.isNotExist(await rejection(b.stat(h))));
        assert.ok(b.isNotExist(await rejection(b.load(handle('config')))));
        await b.remove(h);
        assert.equal(b.isNotExist(new Error('something else')), false);
      }),
    );

    it(
      'removes files',
      run(async (b) => {
        const h = handle('lock');
        await b.save(h, randomBytes(10));
        await b.remove(h);
        assert.ok(b.isNotExist(await rejection(b.stat(h))));
        assert.deepEqual(await collect(b, 'lock'), []);
      }),
    );

    it(
      'lists each type apart, packs across the data/xx fan-out, never config',
      run(async (b) => {
        assert.deepEqual(await collect(b, 'pack'), []);
        const expected = new Map<FileType, FileInfo[]>();
        for (const type of listedTypes) {
          // pack names spread over several fan-out folders
          const names = ['00', '7f', 'a3', 'ff', 'a3'].map((p) => p + randomID().slice(2));
          const infos: FileInfo[] = [];
          for (const [i, name] of names.entries()) {
            await b.save({ type, name }, randomBytes(10 + i));
            infos.push({ name, size: 10 + i });
          }
          expected.set(
            type,
            infos.sort((x, y) => x.name.localeCompare(y.name)),
          );
        }
        await b.save(handle('config'), randomBytes(5));
        for (const type of listedTypes) assert.deepEqual(await collect(b, type), expected.get(type), type);
        assert.deepEqual(await collect(b, 'config'), []);
      }),
    );

    it(
      'lists more than a thousand files (one S3 page)',
      run(async (b) => {
        const names = Array.from({ length: 1005 }, () => randomID());
        for (let i = 0; i < names.length; i += 25) {
          await Promise.all(names.slice(i, i + 25).map((name) => b.save({ type: 'index', name }, Buffer.from(name))));
        }
        const listed = await collect(b, 'index');
        assert.deepEqual(
          listed.map((f) => f.name),
          [...names].sort(),
        );
        assert.ok(listed.every((f) => f.size === 64));
      }),
    );

    it(
      'accepts saving the same file again (steps re-run after a crash)',
      run(async (b) => {
        const h = handle('pack');
        const data = randomBytes(2048);
        await b.save(h, data);
        await b.save(h, data);
        assert.deepEqual(Buffer.from(await b.load(h)), data);
        assert.deepEqual(await collect(b, 'pack'), [{ name: h.name, size: data.length }]);
      }),
    );

    it(
      "keeps the bytes it was given, not the caller's buffer",
      run(async (b) => {
        const h = handle('index');
        const data = randomBytes(64);
        const copy = Buffer.from(data);
        await b.save(h, data);
        data.fill(0);
        assert.deepEqual(Buffer.from(await b.load(h)), copy);
      }),
    );

    it(
      'rejects a save whose signal is already aborted and stores nothing',
      run(async (b) => {
        const h = handle('pack');
        const ac = new AbortController();
        ac.abort();
        await rejection(b.save(h, randomBytes(1000), ac.signal));
        assert.ok(b.isNotExist(await rejection(b.stat(h))));
        assert.deepEqual(await collect(b, 'pack'), []);
      }),
    );

    it(
      'never shows a partial file: an aborted large save leaves nothing or the whole file',
      run(async (b) => {
        const h = handle('pack');
        const data = randomBytes(21 * mib);
        const ac = new AbortController();
        const saving = b.save(h, data, ac.signal);
        setTimeout(() => ac.abort(), 20);
        await saving.catch(() => {});
        for (const info of await collect(b, 'pack')) {
          assert.deepEqual(info, { name: h.name, size: data.length });
          assert.deepEqual(Buffer.from(await b.load(h)), data);
        }
      }),
    );

    it(
      'stores large objects (multipart on S3) and reads ranges across part boundaries',
      run(async (b) => {
        const h = handle('pack');
        const data = randomBytes(24 * mib + 12345);
        const seen: number[] = [];
        let done = false;
        const saving = b.save(h, data).finally(() => {
          done = true;
        });
        // a reader polling during the save must see either nothing or the final size
        while (!done) {
          for (const info of await collect(b, 'pack')) seen.push(info.size);
          await new Promise((r) => setTimeout(r, 5));
        }
        await saving;
        assert.ok(
          seen.every((size) => size === data.length),
          `partial sizes seen: ${seen.join(',')}`,
        );
        assert.equal((await b.stat(h)).size, data.length);
        assert.ok(Buffer.from(await b.load(h)).equals(data));
        const boundary = 8 * mib;
        assert.ok(
          Buffer.from(await b.load(h, boundary - 1000, 3000)).equals(data.subarray(boundary - 1000, boundary + 2000)),
        );
        assert.ok(Buffer.from(await b.load(h, data.length - 10)).equals(data.subarray(data.length - 10)));
      }),
    );

    it(
      'refuses names that are not IDs, so nothing escapes the layout',
      run(async (b) => {
        for (const name of ['../../etc/passwd', 'ab/cd', '', 'ABCDEF', randomID().slice(1)]) {
          const err = await rejection(b.save({ type: 'pack', name }, randomBytes(1)));
          assert.ok(isPermanent(err), `${name}: ${String(err)}`);
        }
      }),
    );

    it('creates a fresh location, and preparing it again (a racer that lost) leaves what is there', async () => {
      const b = await target.make();
      try {
        await b.create();
        const config = randomBytes(10);
        const pack = handle('pack');
        await b.save(handle('config'), config);
        await b.save(pack, randomBytes(20));
        await b.create();
        assert.deepEqual(Buffer.from(await b.load(handle('config'))), config);
        assert.equal((await b.stat(pack)).size, 20);
      } finally {
        await b.close();
      }
    });
  });
}
