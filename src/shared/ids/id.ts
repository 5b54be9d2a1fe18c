// Every object in a repository is named by the SHA-256 of its bytes, written as 64 lowercase hex digits.
import { createHash } from 'node:crypto';

export type ID = string;

export function hashID(data: Uint8Array): ID {
  return createHash('sha256').update(data).digest('hex');
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
