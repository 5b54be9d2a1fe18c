// The layout check with the real restic: a repository restic made is copied file by file through ferry's fs and
// S3 backends, and restic must then verify every byte of the copy and prune it (deleting files ferry wrote).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Backend, FileType } from '../../../src/engine/backend/backend.ts';
import { FsBackend } from '../../../src/engine/backend/fs.ts';
import { S3Backend } from '../../../src/engine/backend/s3.ts';
import { startMinio } from '../../support/minio.ts';
import { restic, resticJSON } from '../../support/restic.ts';

const tempPrefix = 'ferry-restic-layout-';
const work = await mkdtemp(join(tmpdir(), tempPrefix));
const minio = await startMinio();
const bucket = await minio.bucket('layout');
const s3Env = { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey };

after(async () => {
  await minio.destroy();
  assert.ok(basename(work).startsWith(tempPrefix));
  await rm(work, { recursive: true, force: true });
});

/** A restic repository with two snapshots of a few files, one of them large enough for several packs. */
async function resticRepository(): Promise<string> {
  const source = join(work, 'source');
  await mkdir(source, { recursive: true });
  await writeFile(join(source, 'big.bin'), randomBytes(40 * 1024 * 1024));
  await writeFile(join(source, 'small.txt'), 'hello restic\n');
  const repo = join(work, 'restic-made');
  await restic({ repo }, ['init']);
  await restic({ repo }, ['backup', source]);
  await writeFile(join(source, 'second.txt'), randomBytes(1000));
  await restic({ repo }, ['backup', source]);
  return repo;
}

const types: FileType[] = ['key', 'lock', 'snapshot', 'index', 'pack'];

async function copyRepository(from: Backend, to: Backend): Promise<number> {
  await to.create();
  let files = 1;
  await to.save({ type: 'config', name: '' }, await from.load({ type: 'config', name: '' }));
  for (const type of types) {
    for await (const { name, size } of from.list(type)) {
      const data = await from.load({ type, name });
      assert.equal(data.length, size);
      await to.save({ type, name }, data);
      files++;
    }
  }
  return files;
}

async function count(b: Backend, type: FileType): Promise<number> {
  let n = 0;
  for await (const _ of b.list(type)) n++;
  return n;
}

const source = new FsBackend(await resticRepository());

describe("restic reads and prunes repositories written through ferry's backends", () => {
  for (const target of ['fs', 's3'] as const) {
    it(`${target}: restic check --read-data passes on the copy, and forget --prune deletes through it`, async () => {
      const prefix = `copy-${target}`;
      const [to, location, env] =
        target === 'fs'
          ? [new FsBackend(join(work, prefix)), join(work, prefix), {}]
          : [
              new S3Backend({
                endpoint: minio.endpoint,
                bucket,
                prefix,
                credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey },
              }),
              `s3:${minio.endpoint}/${bucket}/${prefix}`,
              s3Env,
            ];
      const copied = await copyRepository(source, to);
      assert.ok(copied >= 8, `copied ${copied} files`);
      assert.ok((await count(to, 'pack')) >= 3, 'several packs across the data/xx folders');
      await restic({ repo: location, env }, ['check', '--read-data']);
      const snapshots = await resticJSON<{ id: string }[]>({ repo: location, env }, ['snapshots']);
      assert.equal(snapshots.length, 2);
      const packsBefore = await count(to, 'pack');
      await restic({ repo: location, env }, ['forget', snapshots[1].id, '--prune']);
      assert.equal(await count(to, 'snapshot'), 1);
      assert.ok((await count(to, 'pack')) <= packsBefore);
      await restic({ repo: location, env }, ['check']);
      await to.close();
    });
  }
});
