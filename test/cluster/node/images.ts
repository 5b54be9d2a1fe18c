// The images real nodes run, made on this machine and imported into each node's containerd (never pulled): the
// pause image containerd uses as every pod's sandbox (Kubernetes' own pause.c, compiled static), a busybox-like
// image for the tests' shell pods (the debootstrapped base ferry's image is built on: sh and coreutils), and
// ferry's image. Archives are cached in <cache>/image/ by what they are made from.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { moduleDir } from '../paths.ts';
import { ensureBase } from '../image/base.ts';
import { buildImage, exportImage, ferryImage, imageArchive } from '../image/build.ts';
import { imageCache, podman } from '../image/podman.ts';
import { pauseImage } from './config.ts';

const run = promisify(execFile);

/** The names the tests' shell pods use (test/cluster/testing.ts, the e2e suites). */
export const busyboxNames = ['docker.io/library/busybox:1.36', 'docker.io/library/busybox:latest'];

export interface NodeImage {
  archive: string;
  /** the name the archive carries, then the names to tag it with in containerd */
  name: string;
  tags: string[];
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function pauseSource(): Promise<string> {
  const { stdout } = await run('go', ['mod', 'download', '-json', 'k8s.io/kubernetes'], {
    cwd: moduleDir,
    env: {
      ...process.env,
      PATH: `${process.env.PATH}:/usr/local/go/bin`,
      GOTOOLCHAIN: 'local',
      GOFLAGS: '-mod=readonly',
    },
  });
  return join((JSON.parse(stdout) as { Dir: string }).Dir, 'build', 'pause', 'linux', 'pause.c');
}

/** registry.k8s.io/pause:3.10 from Kubernetes' pause.c: `gcc -static`, one file in an image of its own. */
async function pauseArchive(log: (line: string) => void): Promise<NodeImage> {
  const source = await pauseSource();
  const key = createHash('sha256')
    .update(await readFile(source))
    .update(pauseImage)
    .digest('hex')
    .slice(0, 16);
  const archive = join(imageCache(), `pause-${key}.tar`);
  if (!(await exists(archive))) {
    log(`building ${pauseImage} from ${source}`);
    const work = await mkdtemp(join(tmpdir(), 'ferrybox-pause-'));
    try {
      await run('gcc', ['-Os', '-static', '-DVERSION=3.10', '-o', join(work, 'pause'), source]);
      await run('tar', [
        '--numeric-owner',
        '--owner=0',
        '--group=0',
        '-C',
        work,
        '-cf',
        join(work, 'rootfs.tar'),
        'pause',
      ]);
      await podman(['import', '--change', 'ENTRYPOINT ["/pause"]', join(work, 'rootfs.tar'), pauseImage], {
        purpose: 'Importing the pause image',
      });
      await mkdir(imageCache(), { recursive: true });
      await exportImage(`${archive}.partial`, pauseImage);
      await rename(`${archive}.partial`, archive);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  return { archive, name: pauseImage, tags: [] };
}

/** The image base as the tests' busybox: the same archive whichever tag a test names. */
async function busyboxArchive(log: (line: string) => void): Promise<NodeImage> {
  const base = await ensureBase(log);
  return { archive: await imageArchive(base.image), name: base.image, tags: busyboxNames };
}

/** Builds what is missing (podman caches the layers of ferry's image) and returns the archives to import. */
export async function nodeImages(log: (line: string) => void): Promise<NodeImage[]> {
  const pause = await pauseArchive(log);
  const busybox = await busyboxArchive(log);
  const ferry = await buildImage({ log });
  return [pause, busybox, { archive: await imageArchive(ferry.tag), name: ferryImage, tags: [] }];
}

/** `ctr images import` into the node's containerd (unpacked for its snapshotter), then the extra names. */
export async function importImages(socket: string, images: NodeImage[]): Promise<void> {
  const ctr = (args: string[]): Promise<unknown> =>
    run('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args], { maxBuffer: 16 << 20 });
  for (const image of images) {
    await ctr(['images', 'import', image.archive]);
    for (const tag of image.tags) await ctr(['images', 'tag', '--force', image.name, tag]);
  }
}
