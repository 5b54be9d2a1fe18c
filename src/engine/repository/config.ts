// The repository's `config` file: format version, repository id, chunker polynomial. It is the one file that is
// encrypted but never compressed, because a reader must learn the version before it knows how to decompress.
import { randomBytes } from 'node:crypto';
import {
  formatPolynomial,
  isIrreducible,
  parsePolynomial,
  randomPolynomial,
  type Polynomial,
} from '../chunker/polynomial.ts';

export const formatVersion = 2;

export interface RepoConfig {
  version: number;
  id: string;
  chunkerPolynomial: Polynomial;
}

export function newConfig(pol: Polynomial = randomPolynomial()): RepoConfig {
  return { version: formatVersion, id: randomBytes(32).toString('hex'), chunkerPolynomial: pol };
}

export function encodeConfig(c: RepoConfig): Uint8Array {
  const json = { version: c.version, id: c.id, chunker_polynomial: formatPolynomial(c.chunkerPolynomial) };
  return Buffer.from(JSON.stringify(json) + '\n');
}

export function decodeConfig(bytes: Uint8Array): RepoConfig {
  const raw = JSON.parse(Buffer.from(bytes).toString('utf8')) as {
    version?: unknown;
    id?: unknown;
    chunker_polynomial?: unknown;
  };
  if (raw.version !== 1 && raw.version !== 2) {
    throw new Error(`unsupported repository version ${String(raw.version)}: ferry reads versions 1 and 2`);
  }
  if (typeof raw.id !== 'string' || typeof raw.chunker_polynomial !== 'string') {
    throw new Error('repository config is missing its id or chunker_polynomial');
  }
  const pol = parsePolynomial(raw.chunker_polynomial);
  // a reducible polynomial would chunk differently from restic and deduplicate badly; restic refuses it too
  if (!isIrreducible(pol))
    throw new Error(`repository config has a chunker polynomial ${raw.chunker_polynomial} that is not irreducible`);
  return { version: raw.version, id: raw.id, chunkerPolynomial: pol };
}
