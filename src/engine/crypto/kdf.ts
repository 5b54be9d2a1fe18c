// scrypt turns a password and a key file's salt into the user key that seals the master key.
// 64 bytes out: AES-256 key, then MAC k, then MAC r (restic's split).

import { scrypt } from 'node:crypto';
import type { MasterKey } from './key.ts';

export interface KDFParams {
  N: number;
  r: number;
  p: number;
}

/**
 * restic's starting point before it calibrates. restic's init then raises the cost until one derivation takes about
 * half a second on the machine that runs it, and every command that opens the repository pays it once. ferry keeps
 * the lower cost because each step Job opens the repository and, in a cluster, the password is an HMAC of the
 * location's Secret, so the KDF matters only when that Secret itself can be guessed. A password so guessed, or a
 * human one given to `ferry repo init`, is about five times cheaper to try than in a repository restic made on the
 * same machine.
 */
export const defaultKDFParams: KDFParams = { N: 32768, r: 8, p: 1 };

export const saltSize = 64;

// restic calibrates N (within 60 MiB), then p, for ~0.5 s; we accept N up to 2^20 so any key restic makes opens, and
// no more, so that a hostile key file cannot demand gigabytes.
const maxN = 1 << 20;
const maxRP = 1 << 10;

export function assertKDFParams(params: KDFParams): void {
  const { N, r, p } = params;
  if (!Number.isInteger(N) || N < 2 || N > maxN || (N & (N - 1)) !== 0) {
    throw new Error(`scrypt N=${N} must be a power of two between 2 and ${maxN}.`);
  }
  if (!Number.isInteger(r) || !Number.isInteger(p) || r < 1 || p < 1 || r * p > maxRP) {
    throw new Error(`scrypt r=${r}, p=${p} must be positive integers with r*p at most ${maxRP}.`);
  }
}

export function deriveUserKey(password: string, salt: Uint8Array, params: KDFParams): Promise<MasterKey> {
  assertKDFParams(params);
  if (salt.length !== saltSize) {
    return Promise.reject(new Error(`The scrypt salt is ${salt.length} bytes; restic key files use ${saltSize}.`));
  }
  const { N, r, p } = params;
  // scrypt needs 128*N*r bytes for V plus 128*r*p for B; Node's default 32 MiB cap is below restic's N.
  const maxmem = 128 * N * r + 128 * r * p + (1 << 20);
  return new Promise((resolve, reject) => {
    scrypt(password, salt, 64, { N, r, p, maxmem }, (err, out) => {
      if (err) reject(new Error(`scrypt failed: ${err.message}`));
      else resolve({ encrypt: out.subarray(0, 32), macK: out.subarray(32, 48), macR: out.subarray(48, 64) });
    });
  });
}
