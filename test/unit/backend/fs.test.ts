// The filesystem backend: the shared contract, plus the on-disk details restic relies on.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FsBackend } from '../../../src/engine/backend/fs.ts';
import { backendContract, handle } from './contract.ts';

const tempPrefix = 'ferry-fs-backend-';
const tempDirs: string[] = [];

/** A repository path that does not exist yet, inside a temporary folder of its own. */
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), tempPrefix));
  tempDirs.push(dir);
  return join(dir, 'repo');
}

after(async () => {
  for (const dir of tempDirs) {
    // only ever the folders mkdtemp made above: the files inside are read-only, so this is rm -rf
    assert.ok(basename(dir).startsWith(tempPrefix), `refusing to delete ${dir}`);
    await rm(dir, { recursive: true, force: true });
  }
});

backendContract({ name: 'fs', make: async () => new FsBackend(await freshDir()) });

describe('fs backend on disk', () => {
  it("creates restic's folders: keys, locks, snapshots, index and data/00..ff, private to the owner", async () => {
    const repo = await freshDir();
    await new FsBackend(repo).create();
    assert.deepEqual((await readdir(repo)).sort(), ['data', 'index', 'keys', 'locks', 'snapshots']);
    const fanOut = (await readdir(join(repo, 'data'))).sort();
    assert.equal(fanOut.length, 256);
    assert.equal(fanOut[0], '00');
    assert.equal(fanOut[255], 'ff');
    assert.equal((await stat(join(repo, 'data', 'a7'))).mode & 0o777, 0o700);
  });

  it("writes files read-only (0400) at restic's paths, and can still remove them", async () => {
    const repo = await freshDir();
    const b = new FsBackend(repo);
    await b.create();
    const h = handle('pack');
    await b.save(h, randomBytes(100));
    const path = join(repo, 'data', h.name.slice(0, 2), h.name);
    assert.equal((await stat(path)).mode & 0o777, 0o400);
    await b.save(h, randomBytes(100));
    await b.remove(h);
    await assert.rejects(stat(path), { code: 'ENOENT' });
  });

  it('follows a group-readable config like restic: files 0440, new folders group-accessible', async () => {
    const repo = await freshDir();
    const b = new FsBackend(repo);
    await b.create();
    await b.save(handle('config'), randomBytes(10));
    await chmod(join(repo, 'config'), 0o640);
    const reopened = new FsBackend(repo);
    const h = handle('key');
    await reopened.save(h, randomBytes(10));
    assert.equal((await stat(join(repo, 'keys', h.name))).mode & 0o777, 0o440);
    await rm(join(repo, 'data', 'ab'), { recursive: true });
    await reopened.save(handle('pack', `ab${randomBytes(31).toString('hex')}`), randomBytes(10));
    // asked for 0770 like restic; the umask may still take the group write bit away, as it does for restic
    assert.equal((await stat(join(repo, 'data', 'ab'))).mode & 0o750, 0o750);
  });

  it('hides temporary files a crashed save left behind', async () => {
    const repo = await freshDir();
    const b = new FsBackend(repo);
    await b.create();
    const h = handle('snapshot');
    await writeFile(join(repo, 'snapshots', `${h.name}-tmp-0123456789`), 'partial');
    const listed = [];
    for await (const info of b.list('snapshot')) listed.push(info);
    assert.deepEqual(listed, []);
  });

  it('leaves no temporary file behind after an aborted save', async () => {
    const repo = await freshDir();
    const b = new FsBackend(repo);
    await b.create();
    const ac = new AbortController();
    const saving = b.save(handle('index'), randomBytes(32 * 1024 * 1024), ac.signal);
    setImmediate(() => ac.abort());
    await assert.rejects(saving, { name: 'AbortError' });
    assert.deepEqual(await readdir(join(repo, 'index')), []);
  });

  it('lists nothing for a folder that does not exist', async () => {
    const b = new FsBackend(await freshDir());
    for await (const info of b.list('pack')) assert.fail(`unexpected ${info.name}`);
  });
});
