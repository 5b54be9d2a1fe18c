// Go walks a string rune by rune and treats every byte of a malformed UTF-8 sequence as an error of
// width 1 (utf8.DecodeRune). WHATWG decoders replace "maximal subparts" instead, so the two disagree
// on how many U+FFFD / \xNN escapes a bad name produces. Everything that must match Go byte for byte
// decodes with this function.

export const RUNE_ERROR = 0xfffd;

/** Decoded rune and the number of bytes it used; an invalid byte gives RUNE_ERROR with size 1. */
export interface Rune {
  r: number;
  size: number;
}

const invalid: Rune = { r: RUNE_ERROR, size: 1 };

function isContinuation(b: number | undefined): boolean {
  return b !== undefined && b >= 0x80 && b <= 0xbf;
}

/** Bounds of the second byte of a multi-byte sequence: they exclude overlong forms, surrogates and > U+10FFFF. */
function secondByteRange(b0: number): [number, number] {
  if (b0 === 0xe0) return [0xa0, 0xbf];
  if (b0 === 0xed) return [0x80, 0x9f];
  if (b0 === 0xf0) return [0x90, 0xbf];
  if (b0 === 0xf4) return [0x80, 0x8f];
  return [0x80, 0xbf];
}

export function decodeRune(b: Uint8Array, i: number): Rune {
  const b0 = b[i];
  if (b0 < 0x80) return { r: b0, size: 1 };
  let size: number;
  if (b0 >= 0xc2 && b0 <= 0xdf) size = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) size = 3;
  else if (b0 >= 0xf0 && b0 <= 0xf4) size = 4;
  else return invalid;
  if (i + size > b.length) return invalid;
  const [lo, hi] = secondByteRange(b0);
  const b1 = b[i + 1];
  if (b1 < lo || b1 > hi) return invalid;
  if (size === 2) return { r: ((b0 & 0x1f) << 6) | (b1 & 0x3f), size };
  if (!isContinuation(b[i + 2])) return invalid;
  if (size === 3) return { r: ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b[i + 2] & 0x3f), size };
  if (!isContinuation(b[i + 3])) return invalid;
  return { r: ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b[i + 2] & 0x3f) << 6) | (b[i + 3] & 0x3f), size };
}

/** Appends the UTF-8 encoding of a valid rune (not a surrogate, at most U+10FFFF). */
export function pushRune(out: number[], r: number): void {
  if (r < 0x80) out.push(r);
  else if (r < 0x800) out.push(0xc0 | (r >> 6), 0x80 | (r & 0x3f));
  else if (r < 0x10000) out.push(0xe0 | (r >> 12), 0x80 | ((r >> 6) & 0x3f), 0x80 | (r & 0x3f));
  else out.push(0xf0 | (r >> 18), 0x80 | ((r >> 12) & 0x3f), 0x80 | ((r >> 6) & 0x3f), 0x80 | (r & 0x3f));
}

const encoder = new TextEncoder();

/**
 * UTF-8 bytes of a JS string as a plain Uint8Array (not a Buffer, so values compare equal). Short ASCII strings,
 * most file names, are copied by hand: a TextEncoder call costs more than the copy, a large part of decoding a tree.
 */
export function utf8Bytes(s: string): Uint8Array {
  const n = s.length;
  if (n > 64) return encoder.encode(s);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return encoder.encode(s);
    out[i] = c;
  }
  return out;
}
