// Byte ranges of a block device, as changed-block tracking reports them: the report comes from outside (a CSI
// driver through a sidecar), so ranges are clipped to the device and merged before anything trusts them.

export interface ByteRange {
  offset: number;
  length: number;
}

/**
 * Sorted, non-overlapping, non-adjacent ranges inside [0, size). Ranges past the end are clipped (a driver may
 * report in whole blocks past a size that is not a multiple of its block), empty ones dropped; overlapping or
 * out-of-order input is tolerated, as merging it loses nothing: a range only ever causes more to be read.
 */
export function normalizeRanges(ranges: readonly ByteRange[], size: number): ByteRange[] {
  const clipped: ByteRange[] = [];
  for (const [i, r] of ranges.entries()) {
    if (!Number.isSafeInteger(r.offset) || !Number.isSafeInteger(r.length) || r.offset < 0 || r.length < 0)
      throw new RangeError(
        `changed range ${i} (offset ${r.offset}, length ${r.length}) must have a non-negative integer offset and length`,
      );
    const end = Math.min(size, r.offset + r.length);
    if (end > r.offset) clipped.push({ offset: r.offset, length: end - r.offset });
  }
  clipped.sort((a, b) => a.offset - b.offset);
  const merged: ByteRange[] = [];
  for (const r of clipped) {
    const last = merged.at(-1);
    if (last && r.offset <= last.offset + last.length)
      last.length = Math.max(last.length, r.offset + r.length - last.offset);
    else merged.push({ ...r });
  }
  return merged;
}

/** Total bytes of normalized ranges. */
export function rangeBytes(ranges: readonly ByteRange[]): number {
  return ranges.reduce((n, r) => n + r.length, 0);
}
