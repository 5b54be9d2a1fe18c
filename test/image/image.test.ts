// ferry's image as users and the step templates run it. Built from a clean clone of this checkout's HEAD (only
// committed files count: the Containerfile copies src/), with the box's builder (a registry-free base, podman), then
// run under a step's securityContext: read-only root file system, every capability dropped, no network.
// Needs root, podman and debootstrap (.ci/run installs them). The build's time and the image's size are reported.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, chown, lchown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildImage, imageArchive, type BuiltImage } from '../cluster/image/build.ts';
import { checkoutDir } from '../cluster/paths.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { inImage, type Mount } from './container.ts';
import { transferTemplate } from './templates.ts';

const run = promisify(execFile);
const tag = 'localhost/ferry:image-test';
const imageUser = 65532;
const { version } = JSON.parse(await readFile(join(checkoutDir, 'package.json'), 'utf8')) as { version: string };

const work = await mkdtemp(join(tmpdir(), 'ferry-image-'));
after(() => rm(work, { recursive: true, force: true }));

let built: BuiltImage;
before(
  async () => {
    const clone = join(work, 'clone');
    const { stdout: head } = await run('git', ['-C', checkoutDir, 'rev-parse', 'HEAD']);
    await run('git', ['clone', '--quiet', '--no-checkout', checkoutDir, clone]);
    await run('git', ['-C', clone, 'checkout', '--quiet', '--detach', head.trim()]);
    built = await buildImage({ context: clone, tag });
  },
  { timeout: 30 * 60_000 },
);

/** A folder the image's user owns, for what it writes. */
async function ownedFolder(name: string, uid = imageUser): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir, { recursive: true });
  await chown(dir, uid, uid);
  return dir;
}

/** The repository password, readable by its owner only, as a Secret's file with defaultMode 0400. */
async function passwordMount(uid = imageUser): Promise<Mount> {
  const file = join(work, `password-${uid}`);
  await writeFile(file, 'image test password\n', { mode: 0o400 });
  await chown(file, uid, uid);
  return { host: file, at: '/secrets/password', readOnly: true };
}

const repoFlags = ['-r', '/repo', '--password-file', '/secrets/password'];

function ok(r: { code: number | null; stdout: string; stderr: string }, what: string): string {
  assert.equal(r.code, 0, `${what} exited with ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

test('the image builds from a clean clone without npm in it, and its size is reported', async (t) => {
  t.diagnostic(
    `built in ${built.seconds.toFixed(1)} s (debootstrap ${built.debootstrapped ? 'ran' : 'cached'}), ${(built.size / 2 ** 20).toFixed(1)} MiB`,
  );
  // Node (about 120 MiB) and a Debian minbase are most of it; production dependencies are pruned to about 45 MiB
  assert.ok(built.size < 260 * 2 ** 20, `the image grew to ${(built.size / 2 ** 20).toFixed(1)} MiB`);
  const r = await inImage(tag, ['-c', 'command -v npm npx corepack yarn; true'], { entrypoint: 'sh' });
  assert.equal(ok(r, 'looking for package managers').trim(), '', 'a package manager is left in the image');
});

test('the cached archive holds the one image under its name, as `ctr -n k8s.io images import` needs', async () => {
  const file = await imageArchive(tag);
  assert.equal(await imageArchive(tag), file, 'an unchanged image is exported again');
  const { stdout } = await run('tar', ['-xOf', file, 'manifest.json']);
  const manifest = JSON.parse(stdout) as { RepoTags: string[] }[];
  assert.deepEqual(
    manifest.map((m) => m.RepoTags),
    [[tag]],
  );
});

test('ferry --version, ferry-step and ferry-dispatcher run as the non-root default user', async () => {
  assert.equal(ok(await inImage(tag, ['-u'], { entrypoint: 'id' }), 'id').trim(), String(imageUser));
  assert.equal(ok(await inImage(tag, ['--version']), 'ferry --version').trim(), version);
  const step = await inImage(tag, [], { entrypoint: 'ferry-step' });
  assert.equal(step.code, 2, step.stderr);
  assert.match(step.stderr, /usage: ferry-step/);
  const dispatcher = await inImage(tag, ['--help'], { entrypoint: 'ferry-dispatcher' });
  assert.match(ok(dispatcher, 'ferry-dispatcher --help') + dispatcher.stderr, /serve\|sweep/);
});

test('ferry install from the image renders the same manifests as the checkout it was built from', async () => {
  const fromImage = ok(await inImage(tag, ['install', '--dry-run', '-o', 'json']), 'ferry install --dry-run');
  const { stdout: fromCheckout } = await run(
    process.execPath,
    [join(checkoutDir, 'src/entry/ferry.mjs'), 'install', '--dry-run', '-o', 'json'],
    { maxBuffer: 64 << 20 },
  );
  const kinds = (text: string) =>
    (JSON.parse(text) as { items: { kind: string; metadata: { name: string } }[] }).items.map(
      (o) => `${o.kind}/${o.metadata.name}`,
    );
  assert.ok(
    kinds(fromImage).includes('Deployment/ferry-dispatcher'),
    'the dispatcher is among what the image installs',
  );
  assert.deepEqual(kinds(fromImage), kinds(fromCheckout));
});

test('getfattr and setfattr are in the image and work on a mounted folder', async () => {
  const dir = await ownedFolder('xattr');
  const mounts = [{ host: dir, at: '/x' }];
  ok(
    await inImage(tag, ['-c', 'echo a > /x/f && setfattr -n user.ferry -v kept /x/f'], { entrypoint: 'sh', mounts }),
    'setfattr',
  );
  assert.match(
    ok(
      await inImage(tag, ['--only-values', '-n', 'user.ferry', '/x/f'], { entrypoint: 'getfattr', mounts }),
      'getfattr',
    ),
    /^kept$/,
  );
});

test('the CLI backs up, restores and checks a mounted tree as the default user, read-only, without capabilities', async () => {
  const data = join(work, 'tree');
  await makeFixtureTree(data, { smallFiles: 60, bigFile: 2 * 1024 * 1024 });
  await run('chown', ['-R', '-h', `${imageUser}:${imageUser}`, data]);
  const mounts = [
    await passwordMount(),
    { host: await ownedFolder('repo-user'), at: '/repo' },
    { host: data, at: '/data', readOnly: true },
    { host: await ownedFolder('restore-user'), at: '/restore' },
  ];
  ok(await inImage(tag, ['repo', 'init', ...repoFlags], { mounts }), 'repo init');
  ok(await inImage(tag, ['repo', 'backup', ...repoFlags, '--xattrs', '/data'], { mounts }), 'repo backup');
  ok(
    await inImage(tag, ['repo', 'restore', 'latest', ...repoFlags, '--xattrs', '--target', '/restore'], { mounts }),
    'repo restore',
  );
  ok(await inImage(tag, ['repo', 'check', ...repoFlags, '--read-data'], { mounts }), 'repo check');
  assert.deepEqual(await compareTrees(data, join(work, 'restore-user', 'data')), []);
  const note = await inImage(tag, ['--only-values', '-n', 'user.ferry.note', '/restore/data/text.txt'], {
    entrypoint: 'getfattr',
    mounts,
  });
  assert.equal(ok(note, 'getfattr of a restored file'), 'kept across backup');
});

/** Home folders of several users, each 0700 with 0600 files, a setuid program, a fifo and a device node. */
async function tenantsTree(dir: string): Promise<void> {
  for (const [uid, gid] of [
    [0, 0],
    [1001, 1001],
    [1002, 2002],
    [imageUser, imageUser],
  ]) {
    const home = join(dir, `home-${uid}`);
    await mkdir(join(home, 'private'), { recursive: true });
    await writeFile(join(home, 'secret'), `secret of ${uid}\n`.repeat(100));
    await writeFile(join(home, 'private', 'key'), `key of ${uid}\n`);
    for (const [path, mode] of [
      [join(home, 'private', 'key'), 0o600],
      [join(home, 'secret'), 0o600],
      [join(home, 'private'), 0o700],
      [home, 0o700],
    ] as const) {
      await chown(path, uid, gid);
      await chmod(path, mode);
    }
  }
  await writeFile(join(dir, 'tool'), '#!/bin/sh\n');
  await chown(join(dir, 'tool'), 1001, 2002);
  await chmod(join(dir, 'tool'), 0o4750);
  await run('mkfifo', ['-m', '0600', join(dir, 'pipe')]);
  await lchown(join(dir, 'pipe'), 1002, 2002);
  await run('mknod', ['-m', '0600', join(dir, 'null'), 'c', '1', '3']);
  await chmod(dir, 0o700);
}

test("as the transfer templates run it, a backup reads every owner's 0600/0700 files and a restore writes the owners back", async () => {
  const backup = await transferTemplate('transfer-backup.yaml');
  const restore = await transferTemplate('transfer-restore.yaml');
  const data = join(work, 'tenants');
  await tenantsTree(data);
  const repo = join(work, 'repo-root');
  const mounts = [await passwordMount(0), { host: repo, at: '/repo' }, { host: data, at: '/data', readOnly: true }];
  await mkdir(repo);
  ok(await inImage(tag, ['repo', 'init', ...repoFlags], { user: backup.user, mounts }), 'repo init');

  // the capabilities are really enforced: root without the template's stops at the first folder it may not search
  const denied = await inImage(tag, ['repo', 'backup', ...repoFlags, '/data'], { user: backup.user, mounts });
  assert.notEqual(denied.code, 0, "root without capabilities read every tenant's files");
  assert.match(denied.stderr + denied.stdout, /EACCES|permission denied/i);

  ok(
    await inImage(tag, ['repo', 'backup', ...repoFlags, '/data'], {
      user: backup.user,
      capAdd: backup.capabilities,
      mounts,
    }),
    'repo backup',
  );
  const target = join(work, 'restore-root');
  await mkdir(target);
  const restoreMounts = [...mounts, { host: target, at: '/restore' }];
  ok(
    await inImage(tag, ['repo', 'restore', 'latest', ...repoFlags, '--target', '/restore'], {
      user: restore.user,
      capAdd: restore.capabilities,
      mounts: restoreMounts,
    }),
    'repo restore',
  );
  assert.deepEqual(await compareTrees(data, join(target, 'data')), []);
});
