// Unpacked files (index, snapshot, lock) are encrypted whole. In format v2 their plaintext starts with a version
// byte 2 followed by a zstd frame; plaintext that starts with '{' or '[' is legacy uncompressed JSON.
import type { MasterKey } from '../crypto/key.ts';
import { open, seal } from '../crypto/seal.ts';
import { compress, decompress } from '../compress/zstd.ts';

const compressedMarker = 2;

export function encodeUnpacked(key: MasterKey, plaintext: Uint8Array, version: number): Uint8Array {
  if (version < 2) return seal(key, plaintext);
  const z = compress(plaintext);
  const body = new Uint8Array(z.length + 1);
  body[0] = compressedMarker;
  body.set(z, 1);
  return seal(key, body);
}

export function decodeUnpacked(key: MasterKey, sealed: Uint8Array, version: number): Uint8Array {
  const plain = open(key, sealed);
  if (version < 2 || plain.length === 0) return plain;
  const first = plain[0];
  if (first === 0x7b || first === 0x5b) return plain;
  if (first !== compressedMarker) throw new Error(`unknown encoding ${first} of an unpacked file`);
  return decompress(plain.subarray(1));
}
