// ferry's image as the box builds it: the checkout's Containerfile on the local base (base.ts), with Debian's
// podman, no registry (`--pull=never`), the host's network and CA bundle for `npm ci` and apt inside the build, tagged
// as the templates' `image: ferry:dev` resolves. Layers are podman's to cache: a second build of the same sources
// reuses them. `exportImage` writes the one image to an archive for `ctr -n k8s.io images import`.

import { access, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkoutDir } from '../paths.ts';
import { ensureBase } from './base.ts';
import { imageCache, podman } from './podman.ts';

/** `image: ferry:dev` in the templates is short for this name. */
export const ferryImage = 'docker.io/library/ferry:dev';

export interface BuildOptions {
  /** the folder holding the Containerfile, package.json, package-lock.json and src/ (default: this checkout) */
  context?: string;
  tag?: string;
  log?: (line: string) => void;
}

export interface BuiltImage {
  tag: string;
  base: string;
  /** bytes of the image as podman stores it (uncompressed layers) */
  size: number;
  seconds: number;
  debootstrapped: boolean;
}

export async function buildImage(opts: BuildOptions = {}): Promise<BuiltImage> {
  const started = performance.now();
  const log = opts.log ?? (() => {});
  const context = opts.context ?? checkoutDir;
  const tag = opts.tag ?? ferryImage;
  const base = await ensureBase(log);
  await podman(
    [
      'build',
      '--pull=never',
      '--network=host',
      '--volume=/etc/ssl/certs:/etc/ssl/certs:ro',
      `--build-arg=BASE=${base.image}`,
      `--tag=${tag}`,
      `--file=${join(context, 'Containerfile')}`,
      context,
    ],
    { purpose: `Building ${tag} from ${context}`, log },
  );
  const size = Number(
    (await podman(['image', 'inspect', '--format={{.Size}}', tag], { purpose: 'Measuring the image' })).trim(),
  );
  return {
    tag,
    base: base.image,
    size,
    seconds: (performance.now() - started) / 1000,
    debootstrapped: base.debootstrapped,
  };
}

/** One image per archive: containerd gives every name of a multi-image archive the first image's manifest. */
export async function exportImage(file: string, tag = ferryImage): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const partial = `${file}.partial-${process.pid}`;
  await rm(partial, { force: true });
  await podman(['save', '--format=docker-archive', `--output=${partial}`, tag], {
    purpose: `Exporting ${tag} to ${file}`,
  });
  await rename(partial, file);
}

/**
 * The image's archive in the cache, <cache>/image/<name>-<image id>.tar, written when the image changed; the archives
 * of the name's older builds are removed (a quarter of a GiB each).
 */
export async function imageArchive(tag = ferryImage): Promise<string> {
  const id = (await podman(['image', 'inspect', '--format={{.Id}}', tag], { purpose: `Looking up ${tag}` }))
    .trim()
    .slice(0, 16);
  const prefix = `${tag.replace(/^.*\//, '').replace(/[^A-Za-z0-9.-]/g, '-')}-`;
  const file = join(imageCache(), `${prefix}${id}.tar`);
  if (
    await access(file).then(
      () => true,
      () => false,
    )
  )
    return file;
  await exportImage(file, tag);
  const archives = new RegExp(`^${prefix.replace(/\./g, '\\.')}[0-9a-f]{16}\\.tar$`);
  for (const old of await readdir(imageCache())) {
    if (archives.test(old) && join(imageCache(), old) !== file) await rm(join(imageCache(), old), { force: true });
  }
  return file;
}
