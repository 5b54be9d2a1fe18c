// ferry's install as objects: deploy/ (which takes in jobs/ and policies/) rendered like `kubectl kustomize`, then
// moved to the chosen namespace and image. `ferry install` applies these; the e2e suites install from them too.
import { join } from 'node:path';
import type { KubeObject } from '../kube/kube.ts';
import { applyOverrides, ferryImage, renderKustomization, type Overrides } from './kustomize.ts';

/** deploy/ of this checkout (or of the installed package: the image carries the same tree). */
export const deployDir = join(import.meta.dirname, '..', '..', '..', 'deploy');

export const defaultNamespace = 'ferry-system';

export interface InstallOptions {
  /** ferry's image, REGISTRY/NAME[:TAG][@DIGEST]; default the one deploy/ names */
  image?: string;
  /** default ferry-system */
  namespace?: string;
  /** default deploy/ of this checkout */
  dir?: string;
}

export async function renderInstall(opts: InstallOptions = {}): Promise<KubeObject[]> {
  const objects = await renderKustomization(opts.dir ?? deployDir);
  const overrides: Overrides = {};
  if (opts.namespace && opts.namespace !== defaultNamespace) overrides.namespace = opts.namespace;
  if (opts.image) overrides.images = [ferryImage(opts.image)];
  return applyOverrides(objects, overrides);
}
