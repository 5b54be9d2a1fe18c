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

const levels = ['debug', 'info', 'info', 'info', 'warn', 'error'].map((l) => Buffer.from(`"level":"${l}",`));
const vocabularySize = 4096;
const vocabularies = new Map<number, Buffer[]>();

/** Pseudo-words, so text compresses like logs and JSON do (zstd -3 gets about 3x), yet never repeats. One list per
 *  seed, kept: small files ask for it 100k times. */
function vocabulary(seed: number): Buffer[] {
  const known = vocabularies.get(seed);
  if (known) return known;
  const random = seededRandom(seed);
  const letters = 'etaoinshrdlcumwfgypbvkjxqz';
  const words: Buffer[] = [];
  for (let i = 0; i < vocabularySize; i++) {
    const length = 3 + Math.floor(random() * 8);
    let w = '';
    // skewed letter choice: low indexes (common letters) come up more often
    for (let j = 0; j < length; j++) w += letters[Math.floor(random() * random() * letters.length)];
    words.push(Buffer.from(w));
  }
  vocabularies.set(seed, words);
  return words;
}

/** Writes bytes into a growing buffer; generating text byte by byte is what keeps dataset generation fast. */
class Writer {
  readonly out: Buffer;
  at = 0;
  constructor(length: number) {
    // room for the longest line past `length`, trimmed at the end
    this.out = Buffer.allocUnsafe(length + 1024);
  }
  bytes(b: Buffer): void {
    for (let i = 0; i < b.length; i++) this.out[this.at++] = b[i];
  }
  ascii(s: string): void {
    for (let i = 0; i < s.length; i++) this.out[this.at++] = s.charCodeAt(i);
  }
  number(n: number): void {
    this.ascii(String(n));
  }
}

const jsonStart = Buffer.from('{"ts":');
const jsonUser = Buffer.from('"user":"');
const jsonID = Buffer.from('","id":');
const jsonMsg = Buffer.from(',"msg":"');
const jsonEnd = Buffer.from('"}\n');

/** Compressible text: JSON lines and log lines mixed, `length` bytes exactly. */
export function textBytes(seed: number, label: string, length: number): Buffer {
  const random = seededRandom(subSeed(seed, label));
  const words = vocabulary(seed);
  const w = new Writer(length);
  const word = (): void => w.bytes(words[Math.floor(random() * vocabularySize)]);
  const phrase = (n: number): void => {
    word();
    for (let i = 1; i < n; i++) {
      w.out[w.at++] = 0x20;
      word();
    }
  };
  let t = 1_700_000_000 + Math.floor(random() * 10_000_000);
  while (w.at < length) {
    t += Math.floor(random() * 5);
    if (random() < 0.5) {
      w.bytes(jsonStart);
      w.number(t);
      w.out[w.at++] = 0x2c;
      w.bytes(levels[Math.floor(random() * levels.length)]);
      w.bytes(jsonUser);
      word();
      w.bytes(jsonID);
      w.number(Math.floor(random() * 1e6));
      w.bytes(jsonMsg);
      phrase(4 + Math.floor(random() * 12));
      w.bytes(jsonEnd);
    } else {
      w.number(t);
      w.out[w.at++] = 0x20;
      word();
      w.ascii(`[${Math.floor(random() * 65536)}]: `);
      phrase(3 + Math.floor(random() * 15));
      w.out[w.at++] = 0x0a;
    }
  }
  return w.out.subarray(0, length);
}
