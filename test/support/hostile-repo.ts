// Writes trees into a real repository exactly as given, bypassing encodeTree's checks (sorted, unique names): a
// hostile repository may hold anything restic's format can carry, and a restore must stay inside its target.
import type { PackWriter } from '../../src/engine/repository/pack-writer.ts';
import type { Repository } from '../../src/engine/repository/repository.ts';
import { saveSnapshot } from '../../src/engine/repository/snapshots.ts';
import { hashID, type ID } from '../../src/engine/ids/id.ts';
import { prepareBlob } from '../../src/engine/pack/prepare.ts';
import { newSnapshot } from '../../src/engine/snapshot/snapshot.ts';
import { utcTime } from '../../src/engine/tree/gotime.ts';
import { encodeNode } from '../../src/engine/tree/nodejson.ts';
import type { TreeNode } from '../../src/engine/tree/node.ts';

export class RawTreeWriter {
  readonly #repo: Repository;
  readonly #writer: PackWriter;

  constructor(repo: Repository) {
    this.#repo = repo;
    this.#writer = repo.writer();
  }

  async #blob(type: 'tree' | 'data', bytes: Uint8Array): Promise<ID> {
    const id = hashID(bytes);
    if (this.#writer.claim(type, id))
      await this.#writer.add(prepareBlob(this.#repo.key, type, id, bytes, true), bytes.length);
    return id;
  }

  data(bytes: Uint8Array): Promise<ID> {
    return this.#blob('data', bytes);
  }

  /** The nodes in the order given, duplicates and all. */
  tree(nodes: readonly TreeNode[]): Promise<ID> {
    return this.#blob('tree', Buffer.from(`{"nodes":[${nodes.map(encodeNode).join(',')}]}\n`));
  }

  /** Flushes the packs and saves a snapshot of `root`; returns the snapshot's id. */
  async snapshot(root: ID): Promise<ID> {
    await this.#writer.flush();
    return saveSnapshot(
      this.#repo,
      newSnapshot(root, utcTime(1_700_000_000_000_000_000n), { paths: ['/'], hostname: 'hostile' }),
    );
  }
}
