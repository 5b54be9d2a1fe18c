// Deterministic file contents for the benchmark datasets. Every piece is derived from (seed, label), so a dataset
// is the same bytes on every machine and any single file can be regenerated on its own.
import { createCipheriv, createHash } from 'node:crypto';
import { seededRandom } from '../../test/support/seeded.ts';

/** A 32-bit seed for one labelled piece of a dataset. */
export function subSeed(seed: number, label: string): number {
  return createHash('sha256').update(`${seed}/${label}`).digest().readUInt32LE(0);
}

/** Incompressible bytes: the AES-256-CTR keystream under a key derived from (seed, label), so it never dedups. */
export function randomBytes(seed: number, label: string, length: number): Buffer {
  const key = createHash('sha256').update(`ferry-bench/${seed}/${label}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return cipher.update(Buffer.alloc(length));
}

const levels = ['debug', 'info', 'info', 'info', 'warn', 'error'];
const vocabularySize = 4096;

const vocabularies = new Map<number, string[]>();

/** Pseudo-words, so text compresses like logs and JSON do (zstd -3 gets about 3x), yet never repeats. One list per
 *  seed, kept: small files ask for it 100k times. */
function vocabulary(seed: number): string[] {
  const known = vocabularies.get(seed);
  if (known) return known;
  const random = seededRandom(seed);
  const letters = 'etaoinshrdlcumwfgypbvkjxqz';
  const words: string[] = [];
  for (let i = 0; i < vocabularySize; i++) {
    const length = 3 + Math.floor(random() * 8);
    let w = '';
    // skewed letter choice: low indexes (common letters) come up more often
    for (let j = 0; j < length; j++) w += letters[Math.floor(random() * random() * letters.length)];
    words.push(w);
  }
  vocabularies.set(seed, words);
  return words;
}

/** Compressible text: JSON lines and log lines mixed, `length` bytes exactly. */
export function textBytes(seed: number, label: string, length: number): Buffer {
  const random = seededRandom(subSeed(seed, label));
  const words = vocabulary(seed);
  const word = (): string => words[Math.floor(random() * vocabularySize)];
  const phrase = (n: number): string => {
    let s = word();
    for (let i = 1; i < n; i++) s += ' ' + word();
    return s;
  };
  const parts: string[] = [];
  let size = 0;
  let t = 1_700_000_000 + Math.floor(random() * 10_000_000);
  while (size < length) {
    t += Math.floor(random() * 5);
    const line = random() < 0.5
      ? `{"ts":${t},"level":"${levels[Math.floor(random() * levels.length)]}","user":"${word()}","id":${Math.floor(random() * 1e6)},"msg":"${phrase(4 + Math.floor(random() * 12))}"}\n`
      : `${new Date(t * 1000).toISOString()} ${word()}[${Math.floor(random() * 65536)}]: ${phrase(3 + Math.floor(random() * 15))}\n`;
    parts.push(line);
    size += line.length;
  }
  return Buffer.from(parts.join(''), 'latin1').subarray(0, length);
}
