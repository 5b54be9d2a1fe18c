// A review is a hint that something changed, never the source of what the dispatcher does: anyone who reaches the
// webhook port can send one, with any object in it. Before answering, the dispatcher reads the object the review
// names (by namespace and name) and keeps it only when its uid is the review's (for a creation: only when nothing
// of that name is stored yet). After answering, it reads the object again until the apiserver shows the change
// stored (a new resourceVersion, or the object gone), and acts on the two versions it read. A forged review names
// an object that then does not change, or one with another uid, so it sets nothing off.
import { sleep } from '../engine/concurrency/sleep.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { KindName } from '../shared/kube/resources.ts';
import type { AdmissionRequest } from './admission.ts';

/** The object a review is about, as the apiserver had it when the review came in. */
export interface Watched {
  key: { kind: KindName; namespace: string; name: string };
  uid: string;
  /** absent for a creation */
  before?: KubeObject;
}

/** Two versions of one object (one uid) as the apiserver stored them: no `before` for a creation, no `after` once gone. */
export interface StoredChange {
  before?: KubeObject;
  after?: KubeObject;
}

export interface StoredChangesOptions {
  /** how long a change may take to be stored after the answer; a review whose change never is sets nothing off */
  timeoutMs?: number;
  /** the first read after the answer; later ones back off up to a second */
  firstReadMs?: number;
  /** changes waited for at once; past that the sweep acts on the rest */
  maxPending?: number;
}

function metadataOf(obj: unknown): { uid?: unknown; name?: unknown; namespace?: unknown } | undefined {
  const metadata = (obj as { metadata?: unknown } | null | undefined)?.metadata;
  return typeof metadata === 'object' && metadata !== null ? metadata : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export class StoredChanges {
  readonly #kube: Kube;
  readonly #timeoutMs: number;
  readonly #firstReadMs: number;
  readonly #maxPending: number;
  readonly #pending = new Map<string, Promise<void>>();

  constructor(kube: Kube, opts: StoredChangesOptions = {}) {
    this.#kube = kube;
    this.#timeoutMs = opts.timeoutMs ?? 15_000;
    this.#firstReadMs = opts.firstReadMs ?? 50;
    this.#maxPending = opts.maxPending ?? 256;
  }

  /**
   * Before the answer: the stored object the review is about, or undefined when nothing stored matches it (no uid
   * in the review, no such object, another uid, or a creation of a name already taken).
   */
  async watch(req: AdmissionRequest, kind: KindName): Promise<Watched | undefined> {
    const meta = metadataOf(req.operation === 'DELETE' ? req.oldObject : req.object);
    const uid = text(meta?.uid);
    // a creation with generateName reaches admission with its name generated in the object only
    const name = text(req.name) ?? text(meta?.name);
    const namespace = text(req.namespace) ?? text(meta?.namespace);
    if (!uid || !name || !namespace) return undefined;
    const key = { kind, namespace, name };
    const stored = await this.#kube.get(key);
    if (req.operation === 'CREATE') return stored ? undefined : { key, uid };
    return stored?.metadata.uid === uid ? { key, uid, before: stored } : undefined;
  }

  /**
   * After the answer: waits (in the background) until the change is stored, then calls `act` with what was read.
   * False when too many changes are waited for already; the same change waited for twice is acted on once.
   */
  follow(watched: Watched, act: (change: StoredChange) => Promise<unknown>, onError: (err: unknown) => void): boolean {
    const id = `${watched.uid}@${watched.before?.metadata.resourceVersion ?? ''}`;
    if (this.#pending.has(id)) return true;
    if (this.#pending.size >= this.#maxPending) return false;
    const done = this.#stored(watched)
      .then((change) => (change ? act(change) : undefined))
      .catch(onError)
      .finally(() => this.#pending.delete(id))
      .then(() => undefined);
    this.#pending.set(id, done);
    return true;
  }

  /** Resolves once every change waited for has been acted on (or given up). */
  async idle(): Promise<void> {
    while (this.#pending.size) await Promise.all(this.#pending.values());
  }

  async #stored(w: Watched): Promise<StoredChange | undefined> {
    const deadline = Date.now() + this.#timeoutMs;
    for (let wait = this.#firstReadMs; Date.now() < deadline; wait = Math.min(wait * 2, 1000)) {
      await sleep(Math.min(wait, Math.max(0, deadline - Date.now())));
      const now = await this.#kube.get(w.key).catch(() => null);
      if (now === null) continue;
      if (!w.before) {
        if (now) return now.metadata.uid === w.uid ? { after: now } : undefined;
      } else if (!now || now.metadata.uid !== w.uid) {
        return { before: w.before };
      } else if (now.metadata.resourceVersion !== w.before.metadata.resourceVersion) {
        return { before: w.before, after: now };
      }
    }
    return undefined;
  }
}
