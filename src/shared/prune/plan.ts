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
