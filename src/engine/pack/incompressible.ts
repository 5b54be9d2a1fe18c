// A cheap guess that zstd would not shrink a blob: its bytes look uniformly random. Trying to compress such data
// costs a zstd context and a pass over it only to store it raw.
// The guess is a byte histogram of a sample, so it cannot see long repeats inside otherwise random data; it only
// answers "incompressible" when the sample's entropy is within a hair of 8 bits per byte.
// The sample is a sixteenth of the blob, 4 to 64 KiB: a histogram of a whole small file cost a good part of what
// compressing it does, and most small files are text. Random samples of 4 KiB score 7.98-8.0 (20,000 drawn), well
// clear of the threshold; text and JSON stay below 6.5.

/** how many slices, evenly spaced, make the sample */
const slices = 4;
const minSample = 4 << 10;
const maxSample = 64 << 10;
/** bits per byte (bias-corrected) above which a sample counts as random */
const threshold = 7.95;
/** below this, a histogram says too little (and compressing is cheap anyway) */
const minLength = 2048;

const counts = new Uint32Array(256);
/** c * log2(c) for the counts a small sample can reach; bigger counts compute it */
const cLog2c = Float64Array.from({ length: minSample + 1 }, (_, c) => (c === 0 ? 0 : c * Math.log2(c)));

export function looksIncompressible(data: Uint8Array): boolean {
  if (data.length < minLength) return false;
  counts.fill(0);
  const sample = Math.min(maxSample, Math.max(minSample, data.length >> 4));
  if (data.length <= sample) {
    for (let i = 0; i < data.length; i++) counts[data[i]]++;
    return entropyBits(counts, data.length) >= threshold;
  }
  const slice = Math.floor(sample / slices);
  const step = Math.floor((data.length - slice) / (slices - 1));
  for (let s = 0; s < slices; s++) {
    const from = s * step;
    for (let i = from; i < from + slice; i++) counts[data[i]]++;
  }
  return entropyBits(counts, slices * slice) >= threshold;
}

/**
 * Shannon entropy in bits per byte, with the Miller-Madow correction for the bias of a finite sample:
 * log2(n) - sum(c log2 c) / n over the byte counts c.
 */
function entropyBits(hist: Uint32Array, n: number): number {
  let sum = 0;
  let seen = 0;
  for (let b = 0; b < 256; b++) {
    const c = hist[b];
    if (c === 0) continue;
    seen++;
    sum += c < cLog2c.length ? cLog2c[c] : c * Math.log2(c);
  }
  return Math.log2(n) - sum / n + (seen - 1) / (2 * n * Math.LN2);
}
