// The bytes Go's encoding/json writes for strings, byte slices and json.RawMessage (Go 1.22 and later).
// restic's trees and snapshots are json.Marshal output, and their blob ids are hashes of these bytes,
// so an encoder that differs by one escape breaks deduplication against restic.
//
// Go escapes ", \, control characters (\b \f \n \r \t short, others as \u00XX), the HTML-sensitive
// < > & as \u003c \u003e \u0026, and U+2028 / U+2029; it writes every invalid UTF-8 byte as the escape
// \ufffd. Everything else, DEL and all of non-ASCII Unicode included, is written as raw UTF-8.
import { isUtf8 } from 'node:buffer';
import { decodeRune, RUNE_ERROR } from './goutf8.ts';

const needsEscape = /["\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]/;

const asciiEscapes: Record<number, string> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
};

function escapeUnit(c: number): string {
  const short = asciiEscapes[c];
  if (short !== undefined) return short;
  return `\\u${c.toString(16).padStart(4, '0')}`;
}

function isEscaped(c: number): boolean {
  return c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26 || c === 0x2028 || c === 0x2029;
}

/**
 * A JS string as Go's json.Marshal writes it, quotes included. A lone surrogate (which a Go string
 * cannot hold) is written as U+FFFD, as its UTF-8 conversion would give.
 */
export function goJsonString(s: string): string {
  if (!needsEscape.test(s)) return `"${s}"`;
  let out = '"';
  let plainFrom = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      const pair = c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff;
      if (pair) {
        i++;
        continue;
      }
      out += s.slice(plainFrom, i) + '\ufffd';
      plainFrom = i + 1;
      continue;
    }
    if (!isEscaped(c)) continue;
    out += s.slice(plainFrom, i) + escapeUnit(c);
    plainFrom = i + 1;
  }
  return out + s.slice(plainFrom) + '"';
}

/** A Go string holding arbitrary bytes, as json.Marshal writes it: each invalid UTF-8 byte becomes \ufffd. */
export function goJsonStringFromBytes(bytes: Uint8Array): string {
  if (isUtf8(bytes))
    return goJsonString(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  let out = '"';
  for (let i = 0; i < bytes.length;) {
    const { r, size } = decodeRune(bytes, i);
    if (r === RUNE_ERROR && size === 1) out += '\\ufffd';
    else if (r > 0xffff || !isEscaped(r)) out += String.fromCodePoint(r);
    else out += escapeUnit(r);
    i += size;
  }
  return out + '"';
}

/** A []byte field: standard base64 with padding; nil is null. */
export function goJsonBytes(bytes: Uint8Array | null): string {
  if (bytes === null) return 'null';
  return `"${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}"`;
}

/** Decodes a []byte field strictly (Go rejects missing padding and foreign characters). */
export function parseGoBase64(text: string, what: string): Uint8Array {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new Error(`${what} is not valid base64`);
  const b = Buffer.from(text, 'base64');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * What json.Marshal makes of a json.RawMessage: the value compacted (no whitespace outside strings)
 * with the HTML-sensitive characters and line separators inside strings escaped. Input must be valid JSON.
 */
export function goCompactJson(raw: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (inString) {
      if (ch === '\\') {
        out += ch + raw[++i];
        continue;
      }
      if (ch === '"') inString = false;
      out +=
        ch === '<' || ch === '>' || ch === '&' || ch === '\u2028' || ch === '\u2029'
          ? escapeUnit(ch.charCodeAt(0))
          : ch;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') continue;
    if (ch === '"') inString = true;
    out += ch;
  }
  return out;
}
