// ferry's install as objects: deploy/ (which takes in jobs/ and policies/) rendered like `kubectl kustomize`, then
// moved to the chosen namespace and image, with the Velero component (deploy/velero) when asked for. `ferry
// install` applies these; the e2e suites install from them too.
import { join } from 'node:path';
import type { KubeObject } from '../kube/kube.ts';
import { applyOverrides, ferryImage, renderKustomization, type Overrides } from './kustomize.ts';
import { veleroComponent } from './velero.ts';

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
  /** Velero's namespace, when ferry is to be Velero's data mover */
  veleroNamespace?: string;
}

export async function renderInstall(opts: InstallOptions = {}): Promise<KubeObject[]> {
  const dir = opts.dir ?? deployDir;
  const overrides: Overrides = {};
  if (opts.namespace && opts.namespace !== defaultNamespace) overrides.namespace = opts.namespace;
  if (opts.image) overrides.images = [ferryImage(opts.image)];
  const objects = applyOverrides(await renderKustomization(dir), overrides);
  if (!opts.veleroNamespace) return objects;
  return veleroComponent(objects, await renderKustomization(join(dir, 'velero')), {
    namespace: opts.namespace ?? defaultNamespace,
    veleroNamespace: opts.veleroNamespace,
  });
}
