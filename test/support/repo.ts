// A repository for tests: cheap scrypt parameters and restic's fixed test polynomial, so tests are fast and
// chunk boundaries are reproducible.
import { MemBackend } from '../../src/engine/backend/mem.ts';
import type { Backend } from '../../src/engine/backend/backend.ts';
import { Repository } from '../../src/engine/repository/repository.ts';

export const testPolynomial = 0x3da3358b4dc173n;
export const testKDF = { N: 1024, r: 8, p: 1 };
export const testPassword = 'correct horse battery staple';

export async function testRepo(backend: Backend = new MemBackend()): Promise<Repository> {
  return Repository.init(backend, testPassword, { polynomial: testPolynomial, kdf: testKDF });
}

/** Deterministic pseudo-random bytes (xorshift), so data is incompressible yet reproducible from a seed. */
export function randomBytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = (Math.imul(seed, 2654435761) ^ 0x9e3779b9) | 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
