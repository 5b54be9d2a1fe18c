// A batch's paths as one buffer and their end offsets, so a batch crosses to a worker as a single transferred
// ArrayBuffer. A path on its own is a view into Node's 64 KiB Buffer pool, and posting a view copies the whole pool
// slab under it: that was tens of kilobytes of copying and garbage per batch, on both threads.

export interface PackedPaths {
  bytes: Uint8Array;
  ends: number[];
}

export function packPaths(paths: Uint8Array[]): PackedPaths {
  const ends: number[] = [];
  let size = 0;
  for (const p of paths) {
    size += p.length;
    ends.push(size);
  }
  // a buffer of its own (never the pool), so it can be transferred
  const bytes = new Uint8Array(size);
  paths.forEach((p, i) => bytes.set(p, i === 0 ? 0 : ends[i - 1]));
  return { bytes, ends };
}

export function unpackPaths(packed: PackedPaths): Uint8Array[] {
  return packed.ends.map((end, i) => packed.bytes.subarray(i === 0 ? 0 : packed.ends[i - 1], end));
}
