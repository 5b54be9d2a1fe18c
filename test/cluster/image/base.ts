// The base the box builds ferry's image on, made without any container registry: a Debian rootfs from the mirror
// apt uses (debootstrap --variant=minbase of the release this machine runs), Node from the checkout's pinned `node`
// package and this machine's npm (the Containerfile's build stage runs `npm ci`), imported into podman as
// localhost/ferry-base:<key>. The rootfs archive is cached as <cache>/image/base-<key>.tar, the key hashing all that
// goes into it (release, mirror, Node and npm versions, this file), so a second machine run or a podman reset
// costs an import (seconds), not a debootstrap (a minute or more).

import { createHash } from 'node:crypto';
import { access, cp, mkdir, readdir, readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { withLock } from '../lock.ts';
import { checkoutDir } from '../paths.ts';
import { imageCache, imageExists, podman, runCommand } from './podman.ts';

export interface Base {
  /** what the Containerfile's BASE argument names */
  image: string;
  /** whether debootstrap ran (false: the cached archive or podman's copy served) */
  debootstrapped: boolean;
}

interface Ingredients {
  release: string;
  mirror: string;
  node: { binary: string; version: string };
  npm: { dir: string; version: string };
}

// what minbase brings that nothing in the image reads; the Containerfile's apt-get update fetches fresh lists
const trimmed = [
  'var/lib/apt/lists',
  'var/cache/apt',
  'usr/share/doc',
  'usr/share/man',
  'usr/share/info',
  'usr/share/locale',
  'var/log',
];

async function release(): Promise<string> {
  const text = await readFile('/etc/os-release', 'utf8');
  const codename = /^VERSION_CODENAME=["']?([a-z]+)/m.exec(text)?.[1];
  if (!/^ID=["']?debian/m.test(text) || !codename)
    throw new Error(
      'The box makes its image base with debootstrap from the Debian release this machine runs; /etc/os-release names no Debian release',
    );
  return codename;
}

/** The mirror of the first apt source for the release, in either of apt's formats (deb822 .sources or one-line). */
async function aptMirror(codename: string): Promise<string> {
  const files = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'];
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      if (uri && new RegExp(`^Suites:.*\\b${codename}\\b`, 'm').test(stanza)) return uri;
    }
    const line = new RegExp(`^deb\\s+(?:\\[[^\\]]*\\]\\s+)?(\\S+)\\s+${codename}\\s`, 'm').exec(text);
    if (line) return line[1];
  }
  throw new Error(`No apt source for Debian ${codename} in ${files.join(' or ')}: debootstrap needs its mirror`);
}

async function pinnedNode(): Promise<Ingredients['node']> {
  const pkg = join(checkoutDir, 'node_modules', 'node', 'node_modules', `node-linux-${process.arch}`);
  const version = (JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as { version: string }).version;
  return { binary: join(pkg, 'bin', 'node'), version };
}

/** The npm on PATH, as a package folder. */
async function machineNpm(): Promise<Ingredients['npm']> {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const cli = await realpath(join(dir, 'npm')).catch(() => undefined);
    if (!cli) continue;
    const pkg = dirname(dirname(cli));
    const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8').catch(() => '{}')) as {
      name?: string;
      version?: string;
    };
    if (manifest.name === 'npm' && manifest.version) return { dir: pkg, version: manifest.version };
  }
  throw new Error("No npm on PATH: the image base needs one for the Containerfile's `npm ci`");
}

async function ingredients(): Promise<Ingredients> {
  const codename = await release();
  return { release: codename, mirror: await aptMirror(codename), node: await pinnedNode(), npm: await machineNpm() };
}

async function key(i: Ingredients): Promise<string> {
  const h = createHash('sha256').update(await readFile(new URL(import.meta.url)));
  for (const part of [i.release, i.mirror, i.node.version, process.arch, i.npm.version]) h.update('\0').update(part);
  return h.digest('hex').slice(0, 16);
}

/** Node and npm where the official node images keep them, and npm told to trust the CA bundle the build mounts. */
async function addNode(rootfs: string, i: Ingredients): Promise<void> {
  const local = join(rootfs, 'usr', 'local');
  await mkdir(join(local, 'bin'), { recursive: true });
  await cp(i.node.binary, join(local, 'bin', 'node'));
  await cp(i.npm.dir, join(local, 'lib', 'node_modules', 'npm'), { recursive: true, verbatimSymlinks: true });
  await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin', 'npm'));
  await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin', 'npx'));
  await mkdir(join(local, 'etc'), { recursive: true });
  await writeFile(join(local, 'etc', 'npmrc'), 'cafile=/etc/ssl/certs/ca-certificates.crt\nupdate-notifier=false\n');
}

/** Called under the cache's lock: what a killed run left is removed first. */
async function makeArchive(archive: string, i: Ingredients, log: (line: string) => void): Promise<void> {
  const rootfs = `${archive}.rootfs`;
  const partial = `${archive}.partial`;
  await rm(rootfs, { recursive: true, force: true });
  try {
    log(`debootstrap --variant=minbase ${i.release} from ${i.mirror} (a minute or more)`);
    await runCommand('debootstrap', ['--variant=minbase', i.release, rootfs, i.mirror], process.env, {
      purpose: 'Making the image base',
    });
    for (const dir of trimmed) {
      await rm(join(rootfs, dir), { recursive: true, force: true });
      await mkdir(join(rootfs, dir), { recursive: true });
    }
    await addNode(rootfs, i);
    await runCommand('tar', ['--numeric-owner', '--xattrs', '-C', rootfs, '-cf', partial, '.'], process.env, {
      purpose: 'Archiving the image base',
    });
    await rename(partial, archive);
  } finally {
    await rm(rootfs, { recursive: true, force: true });
    await rm(partial, { force: true });
  }
}

/** The base image in podman's storage, made or imported when missing. */
export async function ensureBase(log: (line: string) => void = () => {}): Promise<Base> {
  const i = await ingredients();
  const k = await key(i);
  const image = `localhost/ferry-base:${k}`;
  return withLock(join(imageCache(), 'lock'), 20 * 60_000, async () => {
    if (await imageExists(image)) return { image, debootstrapped: false };
    const archive = join(imageCache(), `base-${k}.tar`);
    const cached = await access(archive, constants.R_OK).then(
      () => true,
      () => false,
    );
    if (!cached) {
      await makeArchive(archive, i, log);
      // a base of other ingredients is not used again (a checkout with an older recipe makes its own anew)
      for (const old of await readdir(imageCache()))
        if (/^base-[0-9a-f]{16}\.tar$/.test(old) && join(imageCache(), old) !== archive)
          await rm(join(imageCache(), old));
    }
    log(`importing ${archive} as ${image}`);
    await podman(
      [
        'import',
        '--change',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change',
        'CMD ["node"]',
        archive,
        image,
      ],
      { purpose: 'Importing the image base', log },
    );
    return { image, debootstrapped: !cached };
  });
}
