// Reproducible pseudo-random bytes for the chunker tests: the AES-256-CTR keystream under a key derived from a seed.
// Fast (the tests need tens of MiB) and the same on every machine, so a failing input can be regenerated.
import { createCipheriv, createHash } from 'node:crypto';

export function seededBytes(seed: string, length: number): Uint8Array {
  const key = createHash('sha256').update(seed).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return new Uint8Array(Buffer.concat([cipher.update(Buffer.alloc(length)), cipher.final()]));
}

/** A reader over seeded bytes, for functions that draw their randomness through a callback. */
export function seededReader(seed: string, length: number): (n: number) => Uint8Array {
  const bytes = seededBytes(seed, length);
  let offset = 0;
  return (n) => {
    if (offset + n > length) throw new Error(`Seeded reader "${seed}" ran out of its ${length} bytes.`);
    offset += n;
    return bytes.subarray(offset - n, offset);
  };
}
