// A cheap guess that zstd would not shrink a blob: its bytes look uniformly random. Trying to compress such data
// costs a zstd context and a pass over it (about 60 µs for an 8 KiB blob, 2 ms per MiB) only to store it raw.
// The guess is a byte histogram of a sample, so it cannot see long repeats inside otherwise random data; it only
// answers "incompressible" when the sample's entropy is within a hair of 8 bits per byte.

/** bytes per sample slice, and how many slices a large blob contributes */
const sliceBytes = 16 << 10;
const slices = 4;
/** bits per byte (bias-corrected) above which a sample counts as random; text and JSON stay well below 6.5 */
const threshold = 7.95;
/** below this, a histogram says too little (and compressing is cheap anyway) */
const minLength = 2048;

const counts = new Uint32Array(256);

export function looksIncompressible(data: Uint8Array): boolean {
  if (data.length < minLength) return false;
  counts.fill(0);
  let n = 0;
  if (data.length <= slices * sliceBytes) {
    for (let i = 0; i < data.length; i++) counts[data[i]]++;
    n = data.length;
  } else {
    const step = Math.floor((data.length - sliceBytes) / (slices - 1));
    for (let s = 0; s < slices; s++) {
      const from = s * step;
      for (let i = from; i < from + sliceBytes; i++) counts[data[i]]++;
    }
    n = slices * sliceBytes;
  }
  return entropyBits(counts, n) >= threshold;
}

/** Shannon entropy in bits per byte, with the Miller-Madow correction for the bias of a finite sample. */
function entropyBits(hist: Uint32Array, n: number): number {
  let h = 0;
  let seen = 0;
  for (let b = 0; b < 256; b++) {
    const c = hist[b];
    if (c === 0) continue;
    seen++;
    const p = c / n;
    h -= p * Math.log2(p);
  }
  return h + (seen - 1) / (2 * n * Math.LN2);
}
