// The narrow Kubernetes interface steps and the dispatcher use: get, list, create, replace, patch and delete of
// plain JSON objects, addressed by kind, namespace and name. One implementation talks to the apiserver
// (./client.ts), one keeps objects in memory for unit tests (./memory.ts), and ./retry.ts wraps either one in
// retries of transient failures.
import type { ObjectMeta } from '../api/types.ts';
import type { KindName } from './resources.ts';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  // the rest (spec, status, data, ...) is the kind's business
  [field: string]: unknown;
}

export interface ObjectKey {
  kind: KindName;
  /** absent for cluster-scoped kinds */
  namespace?: string;
  name: string;
}

export interface ListOptions {
  /** absent: every namespace (or a cluster-scoped kind) */
  namespace?: string;
  /** equality terms only: "a=b,c=d" */
  labelSelector?: string;
}

export type PatchType = 'merge' | 'json';

export interface PatchOptions {
  type?: PatchType;
  /** patch the status subresource */
  status?: boolean;
}

export interface DeleteOptions {
  /** Background (default), Foreground or Orphan */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  /** delete only this incarnation of the name */
  uid?: string;
}

export interface Kube {
  /** The object, or undefined when it does not exist. */
  get<T extends KubeObject>(key: ObjectKey): Promise<T | undefined>;
  list<T extends KubeObject>(kind: KindName, opts?: ListOptions): Promise<T[]>;
  /** Fails with an AlreadyExists KubeError when the name is taken. */
  create<T extends KubeObject>(obj: T): Promise<T>;
  /** Fails with a Conflict KubeError when metadata.resourceVersion is stale. */
  replace<T extends KubeObject>(obj: T): Promise<T>;
  /** Writes only .status (the status subresource); same concurrency rule as replace. */
  replaceStatus<T extends KubeObject>(obj: T): Promise<T>;
  patch<T extends KubeObject>(key: ObjectKey, patch: unknown, opts?: PatchOptions): Promise<T>;
  /** True when this call deleted (or started deleting) the object, false when it was already gone. */
  delete(key: ObjectKey, opts?: DeleteOptions): Promise<boolean>;
  /** A token of ServiceAccount `namespace/name` (a TokenRequest), for the audiences and lifetime `spec` names. */
  createToken(namespace: string, name: string, spec: TokenRequestSpec): Promise<string>;
}

export interface TokenRequestSpec {
  audiences: string[];
  expirationSeconds: number;
  /** the token is void once this pod is gone */
  boundObjectRef?: { apiVersion: 'v1'; kind: 'Pod'; name: string };
}

export function keyOf(obj: KubeObject): ObjectKey {
  return { kind: obj.kind as KindName, namespace: obj.metadata.namespace, name: obj.metadata.name };
}

export function describeKey(key: ObjectKey): string {
  return key.namespace ? `${key.kind} ${key.namespace}/${key.name}` : `${key.kind} ${key.name}`;
}
