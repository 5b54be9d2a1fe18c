// The recovery read mode of a versioned (Object Lock) bucket: the repository as ferry wrote it, read from the
// objects' versions rather than from what the bucket shows now. Someone holding the location's credentials can hide
// every object behind a delete marker, put other bytes under a name or add files of their own, but cannot delete or
// change a retained version. So delete markers are skipped, and for each name the version ferry wrote is chosen:
//   - config, keys, snapshots and index files: only versions under Object Lock retention or a legal hold (ferry gives
//     retention to all of them; `retain` to those written before the policy), so a planted file cannot stop the
//     repository from opening or listing. Of those, `config` (the one file not named by its content) takes the oldest; the
//     others the version whose content hashes to its name.
//   - packs: the version whose content hashes to its name, looked for from the oldest; a pack with a single version
//     keeps it unread (an overwrite always adds a version, and a planted pack is in no index, so never read).
// A name no version qualifies for is left out, as if missing.
import { createHash } from 'node:crypto';
import type { FileType } from './backend.ts';
import type { ObjectVersion, SignedS3 } from './s3-signed.ts';

export class VersionPicker {
  readonly #requests: SignedS3;
  /** the version chosen for each key; null: none is ferry's */
  readonly #chosen = new Map<string, ObjectVersion | null>();

  constructor(requests: SignedS3) {
    this.#requests = requests;
  }

  /** Every name of `type` under `prefix` with a version ferry wrote, and that version. */
  async *list(prefix: string, type: FileType, signal?: AbortSignal): AsyncIterable<ObjectVersion> {
    for (const [key, versions] of await this.#versions(prefix, signal)) {
      const chosen = await this.#choose(key, type, versions, signal);
      if (chosen) yield chosen;
    }
  }

  /** The version of `key` (a file of `type`) ferry wrote, if any. */
  async pick(key: string, type: FileType, signal?: AbortSignal): Promise<ObjectVersion | undefined> {
    const versions = this.#chosen.has(key) ? [] : ((await this.#versions(key, signal)).get(key) ?? []);
    return this.#choose(key, type, versions, signal);
  }

  async #choose(
    key: string,
    type: FileType,
    versions: ObjectVersion[],
    signal?: AbortSignal,
  ): Promise<ObjectVersion | undefined> {
    const known = this.#chosen.get(key);
    if (known !== undefined) return known ?? undefined;
    let candidates = versions.filter((v) => !v.deleteMarker).sort((a, b) => a.lastModified - b.lastModified);
    if (type !== 'pack') candidates = await this.#retained(key, candidates);
    let chosen: ObjectVersion | undefined;
    if (type === 'config' || (type === 'pack' && candidates.length === 1)) chosen = candidates[0];
    else chosen = await this.#hashingToName(key, candidates, signal);
    this.#chosen.set(key, chosen ?? null);
    return chosen;
  }

  async #retained(key: string, versions: ObjectVersion[]): Promise<ObjectVersion[]> {
    const heads = await Promise.all(versions.map((v) => this.#requests.head(key, v.versionId)));
    return versions.filter((_, i) => heads[i].retainUntil !== undefined || heads[i].legalHold);
  }

  async #hashingToName(
    key: string,
    candidates: ObjectVersion[],
    signal?: AbortSignal,
  ): Promise<ObjectVersion | undefined> {
    const name = key.slice(key.lastIndexOf('/') + 1);
    for (const v of candidates) {
      const { bytes } = await this.#requests.get(key, undefined, signal, v.versionId);
      if (createHash('sha256').update(bytes).digest('hex') === name) return v;
    }
    return undefined;
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
