// An in-memory Kube for unit tests of steps and the dispatcher, with the apiserver rules they depend on:
// resourceVersion checks (Conflict), AlreadyExists, the status subresource (a replace keeps status, a status
// write keeps the rest), finalizers delaying deletion, equality label selectors, uid preconditions. Reactors stand
// in for controllers (a snapshot becoming ready, a PVC binding); every call is recorded for assertions.
import { randomUUID } from 'node:crypto';
import { KubeError } from './errors.ts';
import type { DeleteOptions, Kube, KubeObject, ListOptions, ObjectKey, PatchOptions } from './kube.ts';
import type { TokenRequestSpec } from './kube.ts';
import { apiVersionOf, resourceInfo, type KindName } from './resources.ts';

export type Verb = 'get' | 'list' | 'create' | 'replace' | 'replaceStatus' | 'patch' | 'delete';

export interface Action {
  verb: Verb;
  kind: KindName;
  namespace?: string;
  name?: string;
}

type Reactor = (obj: KubeObject, kube: MemoryKube) => void;

export class MemoryKube implements Kube {
  readonly actions: Action[] = [];
  readonly #objects = new Map<string, KubeObject>();
  readonly #reactors: { verb: Verb; kind: KindName; fn: Reactor }[] = [];
  readonly #failures: { verb: Verb; kind: KindName; error: Error }[] = [];
  #version = 1;
  now: () => Date = () => new Date();

  /** Stores objects as they are (defaults filled in), without recording an action or running reactors. */
  /** tokens handed out, in order */
  readonly tokens: { namespace: string; name: string; spec: TokenRequestSpec }[] = [];

  async createToken(namespace: string, name: string, spec: TokenRequestSpec): Promise<string> {
    this.tokens.push({ namespace, name, spec });
    return `token-of-${namespace}-${name}-for-${spec.audiences.join(',')}`;
  }

  seed(...objs: KubeObject[]): void {
    for (const obj of objs) this.#store(this.#withDefaults(structuredClone(obj)));
  }

  /** Runs `fn` after every successful call of `verb` on `kind`, with the object as stored. */
  on(verb: Verb, kind: KindName, fn: Reactor): void {
    this.#reactors.push({ verb, kind, fn });
  }

  /** The next call of `verb` on `kind` fails with `error`. */
  failNext(verb: Verb, kind: KindName, error: Error): void {
    this.#failures.push({ verb, kind, error });
  }

  /** A stored object, for assertions (a copy). */
  peek<T extends KubeObject>(key: ObjectKey): T | undefined {
    const obj = this.#objects.get(mapKey(key));
    return obj ? (structuredClone(obj) as T) : undefined;
  }

  /** Changes a stored object in place as a controller would (new resourceVersion), without recording an action. */
  mutate(key: ObjectKey, fn: (obj: KubeObject) => void): void {
    const obj = this.#objects.get(mapKey(key));
    if (!obj) throw new Error(`no ${key.kind} ${key.name} to mutate`);
    fn(obj);
    obj.metadata.resourceVersion = String(this.#version++);
  }

  all(kind: KindName): KubeObject[] {
    return [...this.#objects.values()].filter((o) => o.kind === kind).map((o) => structuredClone(o));
  }

  async get<T extends KubeObject>(key: ObjectKey): Promise<T | undefined> {
    this.#begin('get', key.kind, key);
    const obj = this.#objects.get(mapKey(key));
    if (!obj) return undefined;
    const copy = structuredClone(obj) as T;
    this.#react('get', obj);
    return copy;
  }

  async list<T extends KubeObject>(kind: KindName, opts: ListOptions = {}): Promise<T[]> {
    this.#begin('list', kind, { namespace: opts.namespace });
    const terms = parseSelector(opts.labelSelector);
    return [...this.#objects.values()]
      .filter((o) => o.kind === kind && (!opts.namespace || o.metadata.namespace === opts.namespace))
      .filter((o) =>
        terms.every(([k, v]) => (v === undefined ? k in (o.metadata.labels ?? {}) : o.metadata.labels?.[k] === v)),
      )
      .map((o) => structuredClone(o) as T);
  }

  async create<T extends KubeObject>(obj: T): Promise<T> {
    const input = this.#withDefaults(structuredClone(obj));
    this.#begin('create', input.kind as KindName, keyOf(input));
    if (this.#objects.has(mapKey(keyOf(input)))) {
      throw new KubeError(409, 'AlreadyExists', `${input.kind} "${input.metadata.name}" already exists`);
    }
    input.metadata.uid = randomUUID();
    input.metadata.creationTimestamp = this.now().toISOString();
    input.metadata.generation = 1;
    delete input.metadata.deletionTimestamp;
    return this.#commit('create', input) as T;
  }

  async replace<T extends KubeObject>(obj: T): Promise<T> {
    const current = this.#current('replace', obj);
    const next = structuredClone(obj) as KubeObject;
    next.status = current.status;
    next.metadata = {
      ...next.metadata,
      uid: current.metadata.uid,
      creationTimestamp: current.metadata.creationTimestamp,
      deletionTimestamp: current.metadata.deletionTimestamp,
    };
    next.metadata.generation =
      (current.metadata.generation ?? 1) + (JSON.stringify(next.spec) === JSON.stringify(current.spec) ? 0 : 1);
    return this.#commit('replace', next) as T;
  }

  async replaceStatus<T extends KubeObject>(obj: T): Promise<T> {
    const current = this.#current('replaceStatus', obj);
    const next = structuredClone(current);
    next.status = structuredClone(obj.status);
    return this.#commit('replaceStatus', next) as T;
  }

  async patch<T extends KubeObject>(key: ObjectKey, patch: unknown, opts: PatchOptions = {}): Promise<T> {
    this.#begin('patch', key.kind, key);
    const current = this.#objects.get(mapKey(key));
    if (!current) throw notFound(key);
    const patched = (
      opts.type === 'json' ? applyJsonPatch(current, patch as JsonPatchOp[]) : mergePatch(current, patch)
    ) as KubeObject;
    const wanted = patched.metadata?.resourceVersion;
    if (
      opts.type !== 'json' &&
      (patch as { metadata?: { resourceVersion?: string } })?.metadata?.resourceVersion !== undefined &&
      wanted !== current.metadata.resourceVersion
    ) {
      throw conflict(key);
    }
    const next = structuredClone(current);
    if (opts.status) next.status = patched.status;
    else
      Object.assign(next, patched, {
        status: resourceInfo(key.kind).statusInline ? patched.status : current.status,
        metadata: { ...patched.metadata, uid: current.metadata.uid },
      });
    return this.#commit('patch', next) as T;
  }

  async delete(key: ObjectKey, opts: DeleteOptions = {}): Promise<boolean> {
    this.#begin('delete', key.kind, key);
    const current = this.#objects.get(mapKey(key));
    if (!current) return false;
    if (opts.uid && opts.uid !== current.metadata.uid) throw conflict(key);
    if ((current.metadata.finalizers ?? []).length > 0) {
      current.metadata.deletionTimestamp ??= this.now().toISOString();
      current.metadata.resourceVersion = String(this.#version++);
    } else {
      this.#objects.delete(mapKey(key));
    }
    this.#react('delete', current);
    return true;
  }

  #begin(verb: Verb, kind: KindName, key: Partial<ObjectKey>): void {
    this.actions.push({ verb, kind, namespace: key.namespace, name: key.name });
    const i = this.#failures.findIndex((f) => f.verb === verb && f.kind === kind);
    if (i >= 0) throw this.#failures.splice(i, 1)[0].error;
  }

  #current(verb: Verb, obj: KubeObject): KubeObject {
    const key = keyOf(obj);
    this.#begin(verb, key.kind, key);
    const current = this.#objects.get(mapKey(key));
    if (!current) throw notFound(key);
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== current.metadata.resourceVersion) throw conflict(key);
    return current;
  }

  #commit(verb: Verb, obj: KubeObject): KubeObject {
    obj.metadata.resourceVersion = String(this.#version++);
    if (obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).length === 0) {
      this.#objects.delete(mapKey(keyOf(obj)));
    } else {
      this.#store(obj);
    }
    this.#react(verb, obj);
    return structuredClone(obj);
  }

  #store(obj: KubeObject): void {
    obj.metadata.resourceVersion ??= String(this.#version++);
    obj.metadata.uid ??= randomUUID();
    obj.metadata.creationTimestamp ??= this.now().toISOString();
    this.#objects.set(mapKey(keyOf(obj)), obj);
  }

  #react(verb: Verb, obj: KubeObject): void {
    for (const r of this.#reactors) if (r.verb === verb && r.kind === obj.kind) r.fn(structuredClone(obj), this);
  }

  #withDefaults(obj: KubeObject): KubeObject {
    const kind = obj.kind as KindName;
    obj.apiVersion ??= apiVersionOf(kind);
    if (!obj.metadata.name && (obj.metadata as { generateName?: string }).generateName) {
      obj.metadata.name = `${(obj.metadata as { generateName?: string }).generateName}${randomUUID().slice(0, 5)}`;
    }
    if (!resourceInfo(kind).namespaced) delete obj.metadata.namespace;
    return obj;
  }
}

function keyOf(obj: KubeObject): ObjectKey {
  return { kind: obj.kind as KindName, namespace: obj.metadata.namespace, name: obj.metadata.name };
}

function mapKey(key: ObjectKey): string {
  return `${key.kind}/${resourceInfo(key.kind).namespaced ? (key.namespace ?? '') : ''}/${key.name}`;
}

function notFound(key: ObjectKey): KubeError {
  return new KubeError(404, 'NotFound', `${key.kind} "${key.name}" not found`);
}

function conflict(key: ObjectKey): KubeError {
  return new KubeError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${key.kind} "${key.name}": the object has been modified; please apply your changes to the latest version and try again`,
  );
}

function parseSelector(selector: string | undefined): [string, string | undefined][] {
  if (!selector) return [];
  return selector.split(',').map((term) => {
    const i = term.indexOf('=');
    return i < 0
      ? [term.trim(), undefined]
      : [
          term.slice(0, i).trim(),
          term
            .slice(i + 1)
            .replace(/^=/, '')
            .trim(),
        ];
  });
}

/** RFC 7386: objects merge key by key, null removes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? structuredClone(target as Record<string, unknown>)
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'test';
  path: string;
  value?: unknown;
}

/** RFC 6902, the operations ferry uses; a failed test is a Conflict, as the apiserver answers. */
function applyJsonPatch(target: KubeObject, ops: JsonPatchOp[]): unknown {
  const doc = structuredClone(target) as unknown as Record<string, unknown>;
  for (const op of ops) {
    const parts = op.path
      .split('/')
      .slice(1)
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = parts.pop()!;
    let parent: any = doc;
    for (const p of parts) parent = parent?.[p];
    if (parent === undefined || parent === null)
      throw new KubeError(422, 'Invalid', `json patch path ${op.path} does not exist`);
    const index = Array.isArray(parent) ? (last === '-' ? parent.length : Number(last)) : -1;
    switch (op.op) {
      case 'test':
        if (JSON.stringify(parent[last]) !== JSON.stringify(op.value))
          throw new KubeError(409, 'Conflict', `json patch test at ${op.path} failed`);
        break;
      case 'remove':
        if (!(last in parent)) throw new KubeError(422, 'Invalid', `json patch path ${op.path} does not exist`);
        if (Array.isArray(parent)) parent.splice(index, 1);
        else delete parent[last];
        break;
      case 'add':
        if (Array.isArray(parent)) parent.splice(index, 0, structuredClone(op.value));
        else parent[last] = structuredClone(op.value);
        break;
      case 'replace':
        if (!(last in parent)) throw new KubeError(422, 'Invalid', `json patch path ${op.path} does not exist`);
        parent[last] = structuredClone(op.value);
        break;
    }
  }
  return doc;
}
