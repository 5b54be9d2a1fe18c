// Unpacked files (index, snapshot, lock) are encrypted whole. In format v2 their plaintext starts with a version
// byte 2 followed by a zstd frame; plaintext that starts with '{' or '[' is legacy uncompressed JSON.
import type { MasterKey } from '../crypto/key.ts';
import { open, seal } from '../crypto/seal.ts';
import { compress, decompress } from '../compress/zstd.ts';
import { release } from '../memory/release.ts';

const compressedMarker = 2;
/**
 * Index files are mostly hex ids, which zstd's fastest level squeezes about as well as the default, in a fraction of
 * the time the main thread of a backup would spend on it.
 */
const unpackedLevel = 1;

export function encodeUnpacked(key: MasterKey, plaintext: Uint8Array, version: number): Uint8Array {
  if (version < 2) return seal(key, plaintext);
  const z = compress(plaintext, unpackedLevel);
  const body = new Uint8Array(z.length + 1);
  body[0] = compressedMarker;
  body.set(z, 1);
  // the index file of a pack of tiny files is megabytes at each step: each is freed as soon as the next is made
  release(z);
  const sealed = seal(key, body);
  release(body);
  return sealed;
}

export function decodeUnpacked(key: MasterKey, sealed: Uint8Array, version: number): Uint8Array {
  const plain = open(key, sealed);
  if (version < 2 || plain.length === 0) return plain;
  const first = plain[0];
  if (first === 0x7b || first === 0x5b) return plain;
  if (first !== compressedMarker) throw new Error(`unknown encoding ${first} of an unpacked file`);
  const out = decompress(plain.subarray(1));
  release(plain);
  return out;
}
