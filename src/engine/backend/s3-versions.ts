// The recovery read mode of a versioned (Object Lock) bucket: the repository as ferry wrote it, read from the
// objects' versions rather than from what the bucket shows now. Someone holding the location's credentials can hide
// every object behind a delete marker or put other bytes under a name, but cannot delete or change a retained
// version. So delete markers are skipped, and for each name the version is chosen that ferry wrote:
//   - a file named by the SHA-256 of its content (packs, index files, snapshots, keys): the version whose content
//     hashes to its name, looked for from the oldest; a name no version hashes to is left out. A name with a single
//     version keeps it unread (an overwrite always adds a version); the engine authenticates what it reads anyway.
//   - `config`, the one file not named by its content: its oldest version, the one `init` wrote.
import { createHash } from 'node:crypto';
import type { ObjectVersion, SignedS3 } from './s3-signed.ts';

export class VersionPicker {
  readonly #requests: SignedS3;
  /** the version chosen for each key; null: none is ferry's */
  readonly #chosen = new Map<string, ObjectVersion | null>();

  constructor(requests: SignedS3) {
    this.#requests = requests;
  }

  /** Every name under `prefix` with a version ferry wrote, and that version. */
  async *list(prefix: string, signal?: AbortSignal): AsyncIterable<ObjectVersion> {
    const byKey = await this.#versions(prefix, signal);
    for (const [key, versions] of byKey) {
      const chosen = await this.#choose(key, versions, signal);
      if (chosen) yield chosen;
    }
  }

  /** The version of `key` ferry wrote, if any; `contentAddressed` false for `config`. */
  async pick(key: string, contentAddressed: boolean, signal?: AbortSignal): Promise<ObjectVersion | undefined> {
    if (!this.#chosen.has(key)) {
      const versions = (await this.#versions(key, signal)).get(key) ?? [];
      await this.#choose(key, versions, signal, contentAddressed);
    }
    return this.#chosen.get(key) ?? undefined;
  }

  async #choose(
    key: string,
    versions: ObjectVersion[],
    signal?: AbortSignal,
    contentAddressed = true,
  ): Promise<ObjectVersion | undefined> {
    const known = this.#chosen.get(key);
    if (known !== undefined) return known ?? undefined;
    const candidates = versions.filter((v) => !v.deleteMarker).sort((a, b) => a.lastModified - b.lastModified);
    let chosen: ObjectVersion | undefined;
    if (!contentAddressed || candidates.length === 1) chosen = candidates[0];
    else {
      const name = key.slice(key.lastIndexOf('/') + 1);
      for (const v of candidates) {
        const { bytes } = await this.#requests.get(key, undefined, signal, v.versionId);
        if (createHash('sha256').update(bytes).digest('hex') === name) {
          chosen = v;
          break;
        }
      }
    }
    this.#chosen.set(key, chosen ?? null);
    return chosen;
  }

  /** Every version and delete marker under `prefix`, by key. */
  async #versions(prefix: string, signal?: AbortSignal): Promise<Map<string, ObjectVersion[]>> {
    const byKey = new Map<string, ObjectVersion[]>();
    let next;
    do {
      const page = await this.#requests.listVersions(prefix, next, signal);
      for (const v of page.versions) {
        const list = byKey.get(v.key);
        if (list) list.push(v);
        else byKey.set(v.key, [v]);
      }
      next = page.next;
    } while (next);
    return byKey;
  }
}
