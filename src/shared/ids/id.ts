// Every object in a repository is named by the SHA-256 of its bytes, written as 64 lowercase hex digits.
import { createHash } from 'node:crypto';

export type ID = string;

export function hashID(data: Uint8Array): ID {
  return createHash('sha256').update(data).digest('hex');
}

export function isID(s: string): boolean {
  return /^[0-9a-f]{64}$/.test(s);
}

export function shortID(id: ID): string {
  return id.slice(0, 8);
}

export function bytesToID(b: Uint8Array): ID {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}
