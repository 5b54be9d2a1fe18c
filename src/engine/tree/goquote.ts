// Go's strconv.Quote / strconv.Unquote for byte strings. restic passes every node name through Quote
// (and stores it without the surrounding quotes) so that names which are not valid UTF-8 survive JSON:
// an invalid byte becomes \xNN, control and other unprintable runes become escapes.
import { goPrintRanges } from './goprint-table.ts';
import { decodeRune, pushRune, RUNE_ERROR, utf8Bytes } from './goutf8.ts';

const printTable: Uint32Array = parseRanges(goPrintRanges);

function parseRanges(text: string): Uint32Array {
  const pairs = text.trim().split(/\s+/);
  const table = new Uint32Array(pairs.length * 2);
  pairs.forEach((pair, i) => {
    const [first, last] = pair.split('-');
    table[2 * i] = parseInt(first, 16);
    table[2 * i + 1] = parseInt(last, 16);
  });
  return table;
}

/** strconv.IsPrint of the Go release that builds restic (its Unicode tables, not the ICU of this Node). */
export function isGoPrint(r: number): boolean {
  let lo = 0;
  let hi = printTable.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (r < printTable[2 * mid]) hi = mid - 1;
    else if (r > printTable[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

const shortEscapes: Record<number, string> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
};

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

function escapeRune(r: number): string {
  if (r === 0x22) return '\\"';
  if (r === 0x5c) return '\\\\';
  if (isGoPrint(r)) return String.fromCodePoint(r);
  const short = shortEscapes[r];
  if (short !== undefined) return short;
  if (r < 0x20 || r === 0x7f) return `\\x${hex(r, 2)}`;
  if (r < 0x10000) return `\\u${hex(r, 4)}`;
  return `\\U${hex(r, 8)}`;
}

/** strconv.Quote(string(bytes)) without the surrounding double quotes. */
export function goQuoteInner(bytes: Uint8Array): string {
  let out = '';
  let plainFrom = 0;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    // Printable ASCII other than quote and backslash is copied in runs, the common case for file names.
    if (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c) {
      i++;
      continue;
    }
    out += latin1(bytes, plainFrom, i);
    const { r, size } = decodeRune(bytes, i);
    out += r === RUNE_ERROR && size === 1 ? `\\x${hex(b, 2)}` : escapeRune(r);
    i += size;
    plainFrom = i;
  }
  return out + latin1(bytes, plainFrom, i);
}

/** The bytes in [from, to) are printable ASCII here, so any single-byte decoding is exact. */
function latin1(bytes: Uint8Array, from: number, to: number): string {
  if (to - from <= 256) return String.fromCharCode.apply(null, bytes.subarray(from, to) as unknown as number[]);
  return Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('latin1');
}

const simpleUnescapes: Record<string, number> = {
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
  '\\': 0x5c,
  '"': 0x22,
};

/**
 * strconv.Unquote of `"` + s + `"`, as bytes: \xNN and octal escapes yield raw bytes, \u and \U escapes
 * and literal characters yield UTF-8. Throws on what Unquote rejects (raw quote or newline, bad escapes).
 */
export function goUnquoteInner(s: string): Uint8Array {
  if (!/["\\\n]/.test(s)) return utf8Bytes(s);
  const out: number[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s.codePointAt(i)!;
    if (c === 0x22 || c === 0x0a)
      throw new Error(`quoted name ${JSON.stringify(s)} contains an unescaped ${c === 0x22 ? 'quote' : 'newline'}`);
    if (c !== 0x5c) {
      pushRune(out, c >= 0xd800 && c <= 0xdfff ? RUNE_ERROR : c);
      i += c > 0xffff ? 2 : 1;
      continue;
    }
    i = unescapeAt(s, i + 1, out);
  }
  return Uint8Array.from(out);
}

/** Decodes the escape whose letter is at s[i] into out and returns the index after it. */
function unescapeAt(s: string, i: number, out: number[]): number {
  const letter = s[i];
  const simple = simpleUnescapes[letter];
  if (simple !== undefined) {
    out.push(simple);
    return i + 1;
  }
  if (letter === 'x') {
    out.push(hexDigits(s, i + 1, 2));
    return i + 3;
  }
  if (letter === 'u' || letter === 'U') {
    const width = letter === 'u' ? 4 : 8;
    const r = hexDigits(s, i + 1, width);
    if (r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff))
      throw new Error(`quoted name ${JSON.stringify(s)} escapes an invalid rune`);
    pushRune(out, r);
    return i + 1 + width;
  }
  if (letter >= '0' && letter <= '7') {
    const digits = s.slice(i, i + 3);
    if (!/^[0-7]{3}$/.test(digits) || parseInt(digits, 8) > 0xff)
      throw new Error(`quoted name ${JSON.stringify(s)} has a bad octal escape`);
    out.push(parseInt(digits, 8));
    return i + 3;
  }
  throw new Error(`quoted name ${JSON.stringify(s)} has an unknown escape \\${letter ?? ''}`);
}

function hexDigits(s: string, from: number, width: number): number {
  const digits = s.slice(from, from + width);
  if (digits.length !== width || !/^[0-9a-fA-F]+$/.test(digits))
    throw new Error(`quoted name ${JSON.stringify(s)} has a bad hex escape`);
  return parseInt(digits, 16);
}
