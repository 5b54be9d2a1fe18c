// What a repository is created with besides its password: a master key, a chunker polynomial and an id. A caller
// that derives them (so that racing first backups all create the same repository) builds them with these; this
// module loads nothing of the repository itself.
export type { MasterKey } from '../crypto/key.ts';
export { derivePolynomial, type Polynomial } from '../chunker/polynomial.ts';
