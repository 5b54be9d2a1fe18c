// Shared fast-check arbitraries. Strings are built from code points directly: fast-check's own
// full-Unicode string unit spends seconds of CPU on its first use.
import fc from 'fast-check';

/** Any Unicode scalar value (no surrogates, which a Go string cannot hold either). */
export const codePoint = fc.integer({ min: 0, max: 0x10ffff - 0x800 }).map((c) => (c >= 0xd800 ? c + 0x800 : c));

export function unicodeString(maxLength: number): fc.Arbitrary<string> {
  return fc.array(codePoint, { maxLength }).map((cs) => String.fromCodePoint(...cs));
}

/** A blob or tree id: 64 lowercase hex digits. */
export const hexId: fc.Arbitrary<string> = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
