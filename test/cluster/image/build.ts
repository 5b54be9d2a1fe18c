// ferry's image as the box builds it: the checkout's Containerfile on the local base (base.ts), with Debian's
// podman, no registry (`--pull=never`), the host's network and CA bundle for `npm ci` and apt inside the build, tagged
// as the templates' `image: ferry:dev` resolves. Layers are podman's to cache: a second build of the same sources
// reuses them. `exportImage` writes the one image to an archive for `ctr -n k8s.io images import`.

import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkoutDir } from '../paths.ts';
import { ensureBase } from './base.ts';
import { podman } from './podman.ts';

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
  await podman(['build', '--pull=never', '--network=host', '--volume=/etc/ssl/certs:/etc/ssl/certs:ro',
    `--build-arg=BASE=${base.image}`, `--tag=${tag}`, `--file=${join(context, 'Containerfile')}`, context],
  { purpose: `Building ${tag} from ${context}`, log });
  const size = Number((await podman(['image', 'inspect', '--format={{.Size}}', tag], { purpose: 'Measuring the image' })).trim());
  return { tag, base: base.image, size, seconds: (performance.now() - started) / 1000, debootstrapped: base.debootstrapped };
}

/** One image per archive: containerd gives every name of a multi-image archive the first image's manifest. */
export async function exportImage(file: string, tag = ferryImage): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await rm(file, { force: true });
  await podman(['save', '--format=docker-archive', `--output=${file}`, tag], { purpose: `Exporting ${tag} to ${file}` });
}
