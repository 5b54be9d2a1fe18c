// One AES-ECB cipher per key, kept as long as the key bytes live. Creating a cipher in OpenSSL 3 costs more than
// sealing a small blob; ECB without padding keeps no state between updates, so it can be reused.
// Key bytes are treated as immutable once used: the cache is keyed by the Uint8Array itself.

import { createCipheriv, type Cipheriv } from 'node:crypto';

const ciphers = new WeakMap<Uint8Array, Cipheriv>();

export function ecbFor(key: Uint8Array): Cipheriv {
  let cipher = ciphers.get(key);
  if (cipher === undefined) {
    if (key.length !== 16 && key.length !== 32)
      throw new Error(`An AES key must be 16 or 32 bytes, not ${key.length}.`);
    cipher = createCipheriv(key.length === 16 ? 'aes-128-ecb' : 'aes-256-ecb', key, null).setAutoPadding(false);
    ciphers.set(key, cipher);
  }
  return cipher;
}
