// Poly1305 in pure JavaScript (@noble/ciphers): the reference every faster kernel is tested against.
// `oneTimeKey` is r || s (32 bytes); r is clamped inside, as the Poly1305 definition requires.

import { poly1305 } from '@noble/ciphers/_poly1305.js';

export function poly1305JS(msg: Uint8Array, oneTimeKey: Uint8Array): Uint8Array {
  return poly1305(msg, oneTimeKey);
}
