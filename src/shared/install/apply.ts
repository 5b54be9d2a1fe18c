// Server-side apply of arbitrary objects through the API, as `kubectl apply --server-side --force-conflicts` does:
// the REST path of each kind comes from API discovery, the apiserver merges what ferry owns, and fields other
// managers set (a caBundle injected by cert-manager, replicas set by an autoscaler) stay theirs.
import type { HttpKube } from '../kube/client.ts';
import type { KubeObject } from '../kube/kube.ts';
import { sleep } from '../../engine/concurrency/sleep.ts';

export const fieldManager = 'ferry';

interface APIResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Where the apiserver serves each kind, read once per group version. */
export class Discovery {
  readonly #kube: HttpKube;
  readonly #groups = new Map<string, Promise<APIResource[]>>();

  constructor(kube: HttpKube) {
    this.#kube = kube;
  }

  #resources(apiVersion: string): Promise<APIResource[]> {
    let found = this.#groups.get(apiVersion);
    if (!found) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      found = this.#kube.call<{ resources: APIResource[] }>('GET', path).then((list) => list?.resources ?? []);
      // a failed or empty answer is not remembered: a CRD just created may be served a moment later
      found.then(
        (r) => {
          if (r.length === 0) this.#groups.delete(apiVersion);
        },
        () => this.#groups.delete(apiVersion),
      );
      this.#groups.set(apiVersion, found);
    }
    return found;
  }

  /** The REST path of the object, or undefined when the apiserver does not serve its kind. */
  async pathOf(obj: KubeObject): Promise<string | undefined> {
    const resource = (await this.#resources(obj.apiVersion)).find((r) => r.kind === obj.kind && !r.name.includes('/'));
    if (!resource) return undefined;
    const base = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
    const ns = resource.namespaced ? `/namespaces/${encodeURIComponent(obj.metadata.namespace ?? 'default')}` : '';
    return `${base}${ns}/${resource.name}/${encodeURIComponent(obj.metadata.name)}`;
  }
}

export function describeObject(obj: KubeObject): string {
  return `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
}

/** Applies one object; dryRun asks the apiserver to validate and merge without storing anything. */
export async function applyObject(
  kube: HttpKube,
  discovery: Discovery,
  obj: KubeObject,
  opts: { dryRun?: boolean } = {},
): Promise<KubeObject> {
  const path = await discovery.pathOf(obj);
  if (!path)
    throw new Error(`The cluster does not serve ${obj.apiVersion} ${obj.kind}, needed for ${describeObject(obj)}.`);
  const query = new URLSearchParams({ fieldManager, force: 'true' });
  if (opts.dryRun) query.set('dryRun', 'All');
  const applied = await kube.call<KubeObject>('PATCH', `${path}?${query}`, obj, 'application/apply-patch+yaml');
  if (!applied)
    throw new Error(`The apiserver answered "not found" to applying ${describeObject(obj)}: does its namespace exist?`);
  return applied;
}

/** Waits until each named CRD is Established, so objects of its kind can be applied. */
export async function waitEstablished(kube: HttpKube, names: readonly string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await kube.call<KubeObject>(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`,
      );
      const conditions =
        (crd?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline)
        throw new Error(`The CustomResourceDefinition ${name} was not Established within ${timeoutMs / 1000} s.`);
      await sleep(250);
    }
  }
}

/** Apply order: namespaces and CRDs before what lives in or uses them, webhooks last so their server exists first. */
function rank(obj: KubeObject): number {
  if (obj.kind === 'Namespace') return 0;
  if (obj.kind === 'CustomResourceDefinition') return 1;
  if (obj.kind.endsWith('WebhookConfiguration')) return 3;
  return 2;
}

/**
 * Applies the objects in dependency order (each CRD Established before the rest), calling `onApplied` with what the
 * apiserver made of each.
 * With dryRun the apiserver checks every object and stores none; CRDs are then not waited for, and objects of kinds
 * they would add cannot be checked.
 */
export async function applyAll(
  kube: HttpKube,
  objects: readonly KubeObject[],
  opts: { dryRun?: boolean; onApplied?: (obj: KubeObject, live: KubeObject) => void } = {},
): Promise<void> {
  const discovery = new Discovery(kube);
  const ordered = [...objects].sort((a, b) => rank(a) - rank(b));
  const crds = ordered.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name);
  let crdsWaited = false;
  for (const obj of ordered) {
    if (rank(obj) > 1 && !crdsWaited && !opts.dryRun) {
      await waitEstablished(kube, crds);
      crdsWaited = true;
    }
    const live = await applyObject(kube, discovery, obj, opts);
    opts.onApplied?.(obj, live);
  }
}
