// Deciding what prune does, as a pure function of the index and the set of used blobs: which packs to delete
// (nothing in them is used), which to repack (mostly unused), and which to keep. Tested by tables.
import type { ID } from '../ids/id.ts';
import type { BlobLocation } from '../index/table.ts';

export interface PackUsage {
  id: ID;
  usedBlobs: number;
  unusedBlobs: number;
  usedBytes: number;
  unusedBytes: number;
}

export interface PrunePlan {
  remove: ID[];
  repack: ID[];
  keep: ID[];
  unusedBytes: number;
  /** stored bytes that repack copies into new packs */
  repackBytes: number;
}

export interface PlanOptions {
  /** repack a pack when at least this fraction of its bytes is unused (0..1) */
  repackUnusedFraction: number;
}

export function packUsage(entries: Iterable<BlobLocation & { used: boolean }>): Map<ID, PackUsage> {
  const usage = new Map<ID, PackUsage>();
  for (const e of entries) {
    let u = usage.get(e.pack);
    if (!u) {
      u = { id: e.pack, usedBlobs: 0, unusedBlobs: 0, usedBytes: 0, unusedBytes: 0 };
      usage.set(e.pack, u);
    }
    if (e.used) {
      u.usedBlobs++;
      u.usedBytes += e.length;
    } else {
      u.unusedBlobs++;
      u.unusedBytes += e.length;
    }
  }
  return usage;
}

export function planPrune(usage: Iterable<PackUsage>, opts: PlanOptions): PrunePlan {
  const plan: PrunePlan = { remove: [], repack: [], keep: [], unusedBytes: 0, repackBytes: 0 };
  for (const u of usage) {
    plan.unusedBytes += u.unusedBytes;
    if (u.usedBlobs === 0) plan.remove.push(u.id);
    else if (u.unusedBytes > 0 && u.unusedBytes / (u.usedBytes + u.unusedBytes) >= opts.repackUnusedFraction) {
      plan.repack.push(u.id);
      plan.repackBytes += u.usedBytes;
    } else plan.keep.push(u.id);
  }
  return plan;
}

/**
 * Of each used blob stored in several packs (two backups wrote it at once), prune keeps one copy, chosen as restic
 * chooses it: going through the locations in index order, the first copy in a pack that holds other used blobs or
 * nothing unused but copies (a pack an interrupted prune wrote), else the last copy. The copies not kept count as
 * unused from then on, so a pack holding only such copies is deleted and one holding a few is repacked without them.
 * `used[i]` is 1 for every location of a used blob and is cleared here for the copies not kept; `copies` lists the
 * locations of each used blob that has more than one; `packOf(i)` is the pack of location i.
 */
export function keepOneCopy(
  used: Uint8Array,
  copies: readonly (readonly number[])[],
  packOf: (location: number) => ID,
): void {
  if (copies.length === 0) return;
  const blobOf = new Int32Array(used.length).fill(-1);
  copies.forEach((locations, blob) => {
    for (const at of locations) blobOf[at] = blob;
  });
  // per pack, the used blobs stored once (and the copies kept so far) and the blobs nothing uses
  const packs = new Map<ID, { used: number; unused: number }>();
  const packAt: ID[] = new Array(used.length);
  for (let i = 0; i < used.length; i++) {
    const id = (packAt[i] = packOf(i));
    let p = packs.get(id);
    if (!p) packs.set(id, (p = { used: 0, unused: 0 }));
    if (blobOf[i] < 0) {
      if (used[i] === 1) p.used++;
      else p.unused++;
    }
  }
  const left = copies.map((locations) => locations.length);
  const kept = new Uint8Array(copies.length);
  for (let i = 0; i < used.length; i++) {
    const blob = blobOf[i];
    if (blob < 0) continue;
    const p = packs.get(packAt[i])!;
    if (kept[blob] === 0 && (p.used > 0 || p.unused === 0 || left[blob] === 1)) {
      kept[blob] = 1;
      p.used++;
    } else {
      used[i] = 0;
      left[blob]--;
    }
  }
}
