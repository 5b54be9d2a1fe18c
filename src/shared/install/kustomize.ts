// The part of kustomize that ferry's own manifests use, so `ferry install` needs no kubectl: a kustomization's
// `resources` (files, or folders with their own kustomization), `namespace` and `images`. Anything else in a
// kustomization is refused by name rather than silently ignored; `kubectl apply -k` remains the way for those.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { KubeObject } from '../kube/kube.ts';

/** kustomize's `images` entry: which image (by name, any tag) becomes what. */
export interface ImageOverride {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

export interface Overrides {
  namespace?: string;
  images?: ImageOverride[];
}

interface Kustomization extends Overrides {
  resources?: string[];
}

const fileNames = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const understood = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images']);

/** Kinds that live outside namespaces; kustomize, too, treats every other kind as namespaced. */
const clusterScoped = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'PriorityClass',
  'StorageClass',
  'CSIDriver',
  'PersistentVolume',
  'VolumeSnapshotClass',
  'VolumeSnapshotContent',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'APIService',
  'IngressClass',
  'RuntimeClass',
  'Node',
]);

export function isClusterScoped(kind: string): boolean {
  return clusterScoped.has(kind);
}

async function readKustomization(dir: string): Promise<Kustomization> {
  for (const name of fileNames) {
    const text = await readFile(join(dir, name), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const k = (yaml.load(text) ?? {}) as Record<string, unknown>;
    const unknown = Object.keys(k).filter((key) => !understood.has(key));
    if (unknown.length > 0)
      throw new Error(
        `${join(dir, name)} uses ${unknown.join(', ')}, which ferry install does not support: use kubectl apply -k.`,
      );
    return k as Kustomization;
  }
  throw new Error(`${dir} has no kustomization.yaml.`);
}

async function readResource(dir: string, entry: string): Promise<KubeObject[]> {
  const path = join(dir, entry);
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new Error(`The kustomization in ${dir} lists ${entry}, which does not exist.`);
  if (info.isDirectory()) return renderKustomization(path);
  return (yaml.loadAll(await readFile(path, 'utf8')) as (KubeObject | null)[]).filter(
    (o): o is KubeObject => o !== null && o !== undefined,
  );
}

/** The objects a kustomization folder stands for, in the order its resources list them. */
export async function renderKustomization(dir: string): Promise<KubeObject[]> {
  const k = await readKustomization(dir);
  const objects: KubeObject[] = [];
  for (const entry of k.resources ?? []) objects.push(...(await readResource(dir, entry)));
  return applyOverrides(objects, k);
}

/** What an overlay with these `namespace` and `images` would make of the objects (the input is not changed). */
export function applyOverrides(objects: readonly KubeObject[], overrides: Overrides): KubeObject[] {
  return objects.map((original) => {
    const obj = structuredClone(original);
    if (overrides.namespace) setNamespace(obj, overrides.namespace);
    for (const image of overrides.images ?? []) replaceImages(obj, image);
    return obj;
  });
}

function setNamespace(obj: KubeObject, namespace: string): void {
  if (obj.kind === 'Namespace') obj.metadata.name = namespace;
  else if (!isClusterScoped(obj.kind)) obj.metadata.namespace = namespace;
  // references to ServiceAccounts and Services among the objects follow them into the new namespace
  if (obj.kind === 'RoleBinding' || obj.kind === 'ClusterRoleBinding') {
    for (const subject of (obj.subjects ?? []) as { kind: string; namespace?: string }[]) {
      if (subject.kind === 'ServiceAccount') subject.namespace = namespace;
    }
  }
  if (obj.kind === 'ValidatingWebhookConfiguration' || obj.kind === 'MutatingWebhookConfiguration') {
    for (const hook of (obj.webhooks ?? []) as { clientConfig?: { service?: { namespace?: string } } }[]) {
      if (hook.clientConfig?.service) hook.clientConfig.service.namespace = namespace;
    }
  }
  // one step further than kustomize: an admission policy's parameter (a template in ferry's namespace) moves too
  const paramRef = (obj.spec as { paramRef?: { namespace?: string } } | undefined)?.paramRef;
  if (obj.kind === 'ValidatingAdmissionPolicyBinding' && paramRef?.namespace) paramRef.namespace = namespace;
}

/** `name[:tag][@digest]` split at the tag's colon, not a registry port's. */
export function parseImage(image: string): { name: string; tag?: string; digest?: string } {
  const [rest, digest] = image.split('@');
  const slash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > slash) return { name: rest.slice(0, colon), tag: rest.slice(colon + 1), digest };
  return { name: rest, digest };
}

function rewrite(image: string, override: ImageOverride): string {
  const current = parseImage(image);
  if (current.name !== override.name) return image;
  const name = override.newName ?? current.name;
  if (override.digest) return `${name}@${override.digest}`;
  const tag = override.newTag ?? current.tag;
  return `${name}${tag ? `:${tag}` : ''}${!override.newTag && current.digest ? `@${current.digest}` : ''}`;
}

/** Every `image` of a container or init container, wherever the pod template sits in the object. */
function replaceImages(node: unknown, override: ImageOverride): void {
  if (Array.isArray(node)) {
    for (const item of node) replaceImages(item, override);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  for (const field of ['containers', 'initContainers']) {
    for (const c of (Array.isArray(record[field]) ? record[field] : []) as { image?: unknown }[]) {
      if (typeof c.image === 'string') c.image = rewrite(c.image, override);
    }
  }
  for (const value of Object.values(record)) replaceImages(value, override);
}

/** `--image` as kustomize's images entry for ferry's image: REGISTRY/NAME[:TAG][@DIGEST]. */
export function ferryImage(image: string): ImageOverride {
  const { name, tag, digest } = parseImage(image);
  if (!name || /\s/.test(image))
    throw new Error(`"${image}" is not an image reference (REGISTRY/NAME[:TAG][@DIGEST]).`);
  return { name: 'ferry', newName: name, newTag: digest ? undefined : (tag ?? 'latest'), digest };
}
