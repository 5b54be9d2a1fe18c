// Every object in a repository is named by the SHA-256 of its bytes, written as 64 lowercase hex digits.
import { hash } from 'node:crypto';

export type ID = string;

export function hashID(data: Uint8Array): ID {
  // one call, not a Hash object's three: less per blob, which a backup of many small files hashes twice
  return hash('sha256', data, 'hex');
}

const zeroIDs = new Map<number, ID>();

/**
 * The id of `length` zero bytes, kept per length: sparse regions and empty disk areas make the same few chunks over
 * and over, and both a backup (which sees them) and a restore (which skips writing them) ask.
 */
export function zeroID(length: number): ID {
  let id = zeroIDs.get(length);
  if (id === undefined) {
    id = hashID(new Uint8Array(length));
    zeroIDs.set(length, id);
  }
  return id;
}

/** 1 for the characters of an id, by char code below 128 */
const idChars = new Uint8Array(128);
for (const c of '0123456789abcdef') idChars[c.charCodeAt(0)] = 1;

/**
 * Whether `s` is 64 lowercase hex digits. By table: decoding a tree checks every content id, and the regular
 * expression took three times as long.
 */
export function isID(s: string): boolean {
  if (s.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || idChars[c] === 0) return false;
  }
  return true;
}

export function shortID(id: ID): string {
  return id.slice(0, 8);
}

export function bytesToID(b: Uint8Array): ID {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}
