// `ferry repo copy` as a user runs it: missing or wrong flags are refused with exit 2 and a sentence naming the flag,
// the destination's password never unlocks the source, and a round trip (back up, copy, copy again, restore the
// copy) gives the original files back with the second copy adding nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ferry, ferryOK, hasStackTrace, parseJSON } from '../support/ferry-cli.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { randomBytes } from '../support/repo.ts';
import { restic } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-cli-copy-'));
test.after(() => rm(work, { recursive: true, force: true }));
const from = join(work, 'from');
const to = join(work, 'to');
const data = join(work, 'data');
const fromPassword = join(work, 'from-password');
const toPassword = join(work, 'to-password');
await mkdir(join(data, 'sub'), { recursive: true });
await writeFile(join(data, 'a.bin'), randomBytes(1_500_000, 4));
await writeFile(join(data, 'sub', 'b.txt'), 'copied across\n'.repeat(2000));
await writeFile(fromPassword, 'source secret\n');
await writeFile(toPassword, 'destination secret\n');

const source = ['--from-repo', from, '--from-password-file', fromPassword];
const dest = ['-r', to, '--password-file', toPassword];
const repoCmd = (...args: string[]) => ferryOK(['repo', ...args], { password: null });
await repoCmd('init', '-r', from, '--password-file', fromPassword);
await repoCmd('init', ...dest);
const backedUp = parseJSON<{ snapshot_id: string }>(
  await repoCmd('backup', data, '-r', from, '--password-file', fromPassword, '--tag', 'keep', '--json'),
);

/** Runs a copy that must be refused as bad usage, and returns what it printed. */
async function refused(args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await ferry(['repo', 'copy', ...args], { password: null, env });
  assert.equal(r.code, 2, `exit code of a refused copy:\n${r.stderr}`);
  assert.ok(!hasStackTrace(r.stderr), r.stderr);
  return r.stderr;
}

test('a copy without a source, its password or a readable password file is refused naming the flag', async () => {
  assert.match(
    await refused(dest),
    /no source repository given: pass --from-repo LOCATION or set FERRY_FROM_REPOSITORY/,
  );
  assert.match(
    await refused([...dest, '--from-repo', from]),
    /no source repository password: pass --from-password-file FILE or set FERRY_FROM_PASSWORD/,
  );
  // the destination's password (FERRY_PASSWORD) is not the source's
  assert.match(
    await refused(['-r', to, '--from-repo', from], { FERRY_PASSWORD: 'destination secret' }),
    /no source repository password: pass --from-password-file/,
  );
  assert.match(
    await refused([...dest, '--from-repo', from, '--from-password-file', join(work, 'absent')]),
    /cannot read --from-password-file .*absent: ENOENT/,
  );
  assert.match(await refused([...source]), /no repository given: pass --repo LOCATION or set FERRY_REPOSITORY/);
  assert.match(
    await refused([...source, '-r', from, '--password-file', fromPassword]),
    /--from-repo and --repo both name .*: a copy needs two repositories/,
  );
  assert.match(
    await refused([...source, ...dest, '--path', 'relative/dir']),
    /--path "relative\/dir" must be an absolute path/,
  );
  assert.match(await refused([...source, ...dest, '--from-repository', from]), /unknown flag --from-repository/);
});

test('a wrong source password fails naming the source repository, and nothing is written', async () => {
  const wrong = join(work, 'wrong');
  await writeFile(wrong, 'not it\n');
  const r = await ferry(['repo', 'copy', ...dest, '--from-repo', from, '--from-password-file', wrong], {
    password: null,
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`wrong password: no key in the repository at ${from} opens with it`));
  assert.deepEqual(await readdir(join(to, 'snapshots')), []);
});

test('copy, copy again, restore the copy: the files come back and the second copy adds nothing', async () => {
  interface Summary {
    snapshots: { source: string; copy: string; skipped: boolean }[];
    data_blobs: number;
    packs_written: number;
    same_polynomial: boolean;
  }
  const first = parseJSON<Summary>(await repoCmd('copy', ...source, ...dest, '--tag', 'keep', '--json'));
  assert.deepEqual(
    first.snapshots.map((s) => [s.source, s.skipped]),
    [[backedUp.snapshot_id, false]],
  );
  assert.ok(first.data_blobs >= 2 && first.packs_written >= 1);
  const again = parseJSON<Summary>(await repoCmd('copy', ...source, ...dest, '--json'));
  assert.deepEqual(again.snapshots, [{ ...first.snapshots[0], skipped: true }]);
  assert.deepEqual([again.data_blobs, again.packs_written], [0, 0]);
  const target = join(work, 'restored');
  await repoCmd('restore', first.snapshots[0].copy, ...dest, '--target', target);
  assert.deepEqual(await compareTrees(data, join(target, data), { sparse: false }), []);
  await restic({ repo: to, password: 'destination secret' }, ['check', '--read-data']);
});

test('without --json, each snapshot is named with its copy and a different polynomial is pointed out', async () => {
  const other = join(work, 'other');
  await repoCmd('init', '-r', other, '--password-file', toPassword);
  const r = await repoCmd(
    'copy',
    ...source,
    '-r',
    other,
    '--password-file',
    toPassword,
    backedUp.snapshot_id.slice(0, 8),
  );
  assert.match(r.stdout + r.stderr, new RegExp(`snapshot ${backedUp.snapshot_id.slice(0, 8)}: copied to [0-9a-f]{8}`));
  assert.match(r.stderr, /different polynomials: copied files keep the source's chunks/);
});

test("init --copy-chunker-params takes the source's polynomial, so its copies deduplicate; its flags are checked", async () => {
  const shared = join(work, 'shared-chunks');
  const init = (...args: string[]) =>
    ferry(['repo', 'init', '-r', shared, '--password-file', toPassword, ...args], { password: null });
  const missing = await init('--copy-chunker-params');
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /no source repository given: pass --from-repo LOCATION or set FERRY_FROM_REPOSITORY/);
  const unused = await init('--from-repo', from);
  assert.equal(unused.code, 2);
  assert.match(unused.stderr, /--from-repo is only read with --copy-chunker-params/);
  await repoCmd('init', '-r', shared, '--password-file', toPassword, '--copy-chunker-params', ...source);
  const polynomial = (repo: string, password: string) =>
    restic({ repo, password }, ['cat', 'config']).then(
      (c) => (JSON.parse(c) as { chunker_polynomial: string }).chunker_polynomial,
    );
  assert.equal(await polynomial(shared, 'destination secret'), await polynomial(from, 'source secret'));
  const r = parseJSON<{ same_polynomial: boolean }>(
    await repoCmd('copy', ...source, '-r', shared, '--password-file', toPassword, '--json'),
  );
  assert.equal(r.same_polynomial, true);
});
