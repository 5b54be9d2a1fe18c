// `ferry repo backup --stream NAME --changed-ranges FILE` as a real process: a list a changed-block tracking driver
// reported reads only around those ranges and still saves the content a full read would (restic reads it back
// byte for byte); a hostile list is refused naming the flag and the entry, before the repository is touched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ferry, ferryOK, parseJSON } from '../support/ferry-cli.ts';
import { randomBytes } from '../support/repo.ts';
import { restic } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-cbt-cli-'));
const repo = join(work, 'repo');
const image = join(work, 'volume.img');
test.after(() => rm(work, { recursive: true, force: true }));

const MiB = 1 << 20;
const size = 64 * MiB;
const device = Buffer.from(randomBytes(size, 34));
// a stretch of zeros, as an unwritten part of a volume reads
device.fill(0, 8 * MiB, 12 * MiB);
await writeFile(image, device);

interface Summary {
  snapshot_id: string;
  parent: string | null;
  data_blobs: number;
  block_read?: { mode: string; bytes_read: number; size: number; reason?: string };
}

const backup = async (...more: string[]): Promise<Summary> =>
  parseJSON<Summary>(await ferryOK(['repo', 'backup', '--repo', repo, '--json', '--stream', 'volume.img', ...more]));

let ranges = 0;
async function rangesFile(content: string): Promise<string> {
  const path = join(work, `ranges-${ranges++}.json`);
  await writeFile(path, content);
  return path;
}

/** Every file of the repository with its size: what "nothing written" is checked against. */
async function repoFiles(): Promise<string[]> {
  const entries = await readdir(repo, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

let full: Summary;

test('a first backup reads the image whole; a list given with no parent to compare against reads it whole too', async () => {
  await ferryOK(['repo', 'init', '--repo', repo]);
  const unchanged = await rangesFile('[]');
  full = await backup('--changed-ranges', unchanged, image);
  assert.equal(full.parent, null);
  assert.equal(full.block_read?.mode, 'full');
  assert.equal(full.block_read?.bytes_read, size);
  assert.match(full.block_read?.reason ?? '', /--changed-ranges not used: no parent snapshot/);
});

test('after a driver reports two changed ranges, only around them is read, and restic restores the changed image', async () => {
  // changes inside 4 KiB blocks, reported as the whole blocks, as a driver reports them
  const changes = [
    { at: 3 * MiB + 1000, bytes: Buffer.from(randomBytes(5000, 1)) },
    { at: 10 * MiB + 17, bytes: Buffer.from(randomBytes(70_000, 2)) },
  ];
  for (const c of changes) c.bytes.copy(device, c.at);
  await writeFile(image, device);
  const reported = changes.map((c) => {
    const offset = Math.floor(c.at / 4096) * 4096;
    return { offset, length: Math.ceil((c.at + c.bytes.length) / 4096) * 4096 - offset };
  });
  const incremental = await backup('--changed-ranges', await rangesFile(JSON.stringify(reported)), image);
  assert.equal(incremental.parent, full.snapshot_id);
  assert.equal(incremental.block_read?.mode, 'changed');
  assert.equal(incremental.block_read?.size, size);
  // a change is re-chunked from the parent's cut before it to a cut both share after it: a few average chunks (1 MiB)
  // each, whichever polynomial the repository drew
  assert.ok(
    incremental.block_read!.bytes_read < size / 2,
    `read ${incremental.block_read!.bytes_read} bytes of ${size}`,
  );
  const restored = join(work, 'restored');
  await restic({ repo }, ['restore', incremental.snapshot_id, '--target', restored]);
  assert.ok((await readFile(join(restored, 'volume.img'))).equals(device), 'restic restores the image as it is now');
  // a full read of the same image finds every blob already stored: the content list is the one a full read makes
  const again = await backup('--parent', 'none', image);
  assert.equal(again.data_blobs, 0);
});

const hostile: [string, string, RegExp][] = [
  [
    'out of order',
    '[{"offset": 8192, "length": 4096}, {"offset": 0, "length": 4096}]',
    /entry 1 .*comes before entry 0/,
  ],
  ['overlapping', '[{"offset": 0, "length": 8192}, {"offset": 4096, "length": 4096}]', /entry 1 .*overlaps entry 0/],
  ['past the end', `[{"offset": ${size - 4096}, "length": 8192}]`, /entry 0 .*past the device's end at 67108864/],
  ['starting past the end', `[{"offset": ${size}, "length": 1}]`, /entry 0 .*past the device's end/],
  ['a negative offset', '[{"offset": -4096, "length": 4096}]', /entry 0 has offset -4096/],
  ['a negative length', '[{"offset": 0, "length": -1}]', /entry 0 has length -1/],
  ['an empty range', '[{"offset": 0, "length": 0}]', /entry 0 has length 0; .* at least 1/],
  ['a numeric string', '[{"offset": "4096", "length": 4096}]', /entry 0 has offset "4096"/],
  ['a fraction', '[{"offset": 0, "length": 4096}, {"offset": 8192, "length": 0.5}]', /entry 1 has length 0\.5/],
  ['past 2^53', '[{"offset": 9007199254740993, "length": 1}]', /entry 0 has offset 9007199254740992/],
  ['a missing length', '[{"offset": 0}]', /entry 0 has length missing/],
  ['an unknown field', '[{"offset": 0, "length": 1, "lenght": 2}]', /entry 0 has the unknown field "lenght"/],
  ['a pair instead of an object', '[[0, 4096]]', /entry 0 is an array/],
  ['an object instead of a list', '{"offset": 0, "length": 1}', /holds an object; it must be a JSON array/],
  ['text that is not JSON', 'offset=0 length=4096', /is not JSON/],
];

for (const [what, content, message] of hostile) {
  test(`a list with ${what} is refused naming the flag and the entry, and nothing is written`, async () => {
    const before = await repoFiles();
    const file = await rangesFile(content);
    const r = await ferry([
      'repo',
      'backup',
      '--repo',
      repo,
      '--stream',
      'volume.img',
      '--changed-ranges',
      file,
      image,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`--changed-ranges ${file.replace(/[.]/g, '\\.')}`));
    assert.match(r.stderr, message);
    assert.deepEqual(await repoFiles(), before);
  });
}

test('--changed-ranges is refused without --stream, with --parent none, and for a file it cannot read', async () => {
  const file = await rangesFile('[]');
  const cases: [string[], RegExp][] = [
    [['--changed-ranges', file, image], /--changed-ranges needs --stream/],
    [['--stream', 'v', '--parent', 'none', '--changed-ranges', file, image], /--parent none leaves none/],
    [['--stream', 'v', '--changed-ranges', join(work, 'absent.json'), image], /absent\.json cannot be read/],
  ];
  const before = await repoFiles();
  for (const [args, message] of cases) {
    const r = await ferry(['repo', 'backup', '--repo', repo, ...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
  }
  assert.deepEqual(await repoFiles(), before);
});

test('the repository stays whole after the refusals', async () => {
  await restic({ repo }, ['check', '--read-data']);
  assert.ok((await readFile(image)).equals(device));
});
