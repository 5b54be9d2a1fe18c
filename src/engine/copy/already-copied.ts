// Which source snapshots a destination already holds, told the way restic's copy tells it, so ferry and restic
// skip each other's copies. A copy keeps its source's id as `original` (or the source's own `original`, when the
// source was itself a copy): the id every copy of one backup shares, however many sites it crossed. A destination
// snapshot is taken for a copy when it carries that id (as `original`, or as its own id) and agrees on everything
// but parent and original; a snapshot rewritten since (another tree, other tags) is copied again.
import type { ID } from '../ids/id.ts';
import type { SnapshotEntry } from '../snapshot/select.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/** The id every copy of `entry` carries as its `original`. */
export function persistentID(entry: SnapshotEntry): ID {
  return entry.snapshot.original ?? entry.id;
}

export class CopiedSnapshots {
  readonly #byOriginal = new Map<ID, SnapshotEntry[]>();

  constructor(destination: readonly SnapshotEntry[]) {
    for (const e of destination) {
      if (e.snapshot.original !== null) this.#add(e.snapshot.original, e);
      // a destination that shares snapshot files with the source (the same repository, or one copied whole)
      this.#add(e.id, e);
    }
  }

  #add(key: ID, e: SnapshotEntry): void {
    const list = this.#byOriginal.get(key);
    if (list) list.push(e);
    else this.#byOriginal.set(key, [e]);
  }

  /** The destination snapshot that is already a copy of `source`, if any. */
  copyOf(source: SnapshotEntry): SnapshotEntry | undefined {
    return this.#byOriginal.get(persistentID(source))?.find((e) => similar(e.snapshot, source.snapshot));
  }

  /** Records a copy just made, so a source listing the same snapshot twice copies it once. */
  record(source: SnapshotEntry, copy: SnapshotEntry): void {
    this.#add(persistentID(source), copy);
  }
}

/** Everything but parent and original (and the summary, which restic leaves out too) agrees; paths and tags as sets. */
export function similar(a: Snapshot, b: Snapshot): boolean {
  return (
    a.time.ns === b.time.ns &&
    a.tree === b.tree &&
    a.hostname === b.hostname &&
    a.username === b.username &&
    a.uid === b.uid &&
    a.gid === b.gid &&
    sameSet(a.paths, b.paths) &&
    sameSet(a.tags, b.tags) &&
    a.excludes.length === b.excludes.length &&
    a.excludes.every((x, i) => x === b.excludes[i])
  );
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && b.every((x) => a.includes(x));
}
