// Go's string escaping as ferry reproduces it: strconv.Quote (node names), encoding/json strings and
// []byte. Expected values are derived by hand from Go's documented rules, and go-vectors.json holds
// values produced by Go itself (see gen/main.go).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { unicodeString } from './arbitrary.ts';
import { goCompactJson, goJsonBytes, goJsonString, goJsonStringFromBytes } from '../../../src/engine/tree/gojson.ts';
import { goQuoteInner, goUnquoteInner, isGoPrint } from '../../../src/engine/tree/goquote.ts';
import { utf8Bytes } from '../../../src/engine/tree/goutf8.ts';

interface StringVector {
  input: string;
  quote: string;
  json: string;
  base64: string;
}
const vectors = JSON.parse(readFileSync(new URL('./fixtures/go-vectors.json', import.meta.url), 'utf8')) as {
  strings: StringVector[];
};

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
const utf8 = (s: string): Uint8Array => utf8Bytes(s);

test('strconv.Quote escapes by hand-derived rules', () => {
  const cases: Array<[Uint8Array, string]> = [
    [utf8('plain name.txt'), 'plain name.txt'],
    [utf8('a"b'), 'a\\"b'],
    [utf8('a\\b'), 'a\\\\b'],
    [utf8('<x> & y'), '<x> & y'], // printable: Quote leaves them, JSON escapes them later
    [utf8('tab\there'), 'tab\\there'],
    [utf8('new\nline\r'), 'new\\nline\\r'],
    [utf8('\x07\x08\x0b\x0c'), '\\a\\b\\v\\f'],
    [utf8('\x00\x1b\x7f'), '\\x00\\x1b\\x7f'],
    [bytes('\x80'), '\\x80'],
    [bytes('a\xff\xfeb'), 'a\\xff\\xfeb'],
    [bytes('\xe2\x82'), '\\xe2\\x82'], // truncated sequence: one escape per byte, as Go decodes
    [bytes('\xed\xa0\x80'), '\\xed\\xa0\\x80'], // UTF-8 encoded surrogate is invalid in Go
    [utf8('emoji 😀'), 'emoji 😀'],
    [utf8('sep\u2028'), 'sep\\u2028'],
    [utf8('soft\u00adhyphen'), 'soft\\u00adhyphen'],
    [utf8('nbsp\u00a0'), 'nbsp\\u00a0'],
    [utf8('tag \u{e0041}'), 'tag \\U000e0041'],
    [utf8('日本語'), '日本語'],
  ];
  for (const [input, expected] of cases) assert.equal(goQuoteInner(input), expected, JSON.stringify(expected));
});

test('encoding/json string escapes by hand-derived rules', () => {
  const cases: Array<[string, string]> = [
    ['plain', '"plain"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['<a href="x">&amp;</a>', '"\\u003ca href=\\"x\\"\\u003e\\u0026amp;\\u003c/a\\u003e"'],
    ['\t\n\r\b\f', '"\\t\\n\\r\\b\\f"'],
    ['\x00\x01\x1f\x7f', '"\\u0000\\u0001\\u001f\x7f"'],
    ['line\u2028para\u2029', '"line\\u2028para\\u2029"'],
    ['emoji 😀 soft\u00ad', '"emoji 😀 soft\u00ad"'],
    ['lone \ud800 surrogate', '"lone \ufffd surrogate"'],
  ];
  for (const [input, expected] of cases) assert.equal(goJsonString(input), expected, JSON.stringify(input));
  assert.equal(goJsonStringFromBytes(bytes('a\x80b\xe2\x82<')), '"a\\ufffdb\\ufffd\\ufffd\\u003c"');
  assert.equal(goJsonStringFromBytes(utf8('valid \ufffd kept raw')), '"valid \ufffd kept raw"');
  assert.equal(goJsonBytes(bytes('\x80')), '"gA=="');
  assert.equal(goJsonBytes(new Uint8Array(0)), '""');
  assert.equal(goJsonBytes(null), 'null');
});

test('escaping matches the values Go produced for every vector', () => {
  assert.ok(vectors.strings.length > 600);
  for (const v of vectors.strings) {
    const input = new Uint8Array(Buffer.from(v.input, 'base64'));
    assert.equal(`"${goQuoteInner(input)}"`, v.quote, `Quote of ${v.input}`);
    assert.equal(goJsonStringFromBytes(input), v.json, `JSON of ${v.input}`);
    assert.equal(goJsonBytes(input), v.base64, `[]byte of ${v.input}`);
  }
});

test('isGoPrint follows Go, not the newer Unicode of this Node', () => {
  assert.equal(isGoPrint(0x20), true);
  assert.equal(isGoPrint(0xa0), false);
  assert.equal(isGoPrint(0x1f600), true);
  // U+0897 (Arabic pepet, Unicode 16) is a mark for this Node's ICU but unassigned in Go's Unicode 15 tables.
  assert.equal(/\p{M}/u.test('\u0897'), true);
  assert.equal(isGoPrint(0x0897), false);
});

test('strconv.Unquote inverts Quote for any bytes', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 40 }), (b) => {
      assert.deepEqual(goUnquoteInner(goQuoteInner(b)), b);
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(unicodeString(20), (s) => {
      const b = utf8(s);
      assert.deepEqual(goUnquoteInner(goQuoteInner(b)), b);
    }),
    { numRuns: 500 },
  );
});

test('strconv.Unquote accepts Go escapes and rejects what Go rejects', () => {
  assert.deepEqual(goUnquoteInner('\\101\\x42\\u0043\\U00000044'), utf8('ABCD'));
  assert.deepEqual(goUnquoteInner('\\xff'), bytes('\xff'));
  for (const bad of ['a"b', 'a\nb', '\\q', '\\x4', '\\ud800', '\\400', "\\'", '\\']) {
    assert.throws(() => goUnquoteInner(bad), /quoted name/, JSON.stringify(bad));
  }
});

test('json.RawMessage is compacted with HTML escaping', () => {
  assert.equal(
    goCompactJson(' { "a" : [1, 2 ],\n "b<": "x & y\u2028" } '),
    '{"a":[1,2],"b\\u003c":"x \\u0026 y\\u2028"}',
  );
  assert.equal(goCompactJson('"esc \\" \\\\ < "'), '"esc \\" \\\\ \\u003c "');
});

test('utf8Bytes encodes as TextEncoder does, short ASCII by hand or not', () => {
  const encoder = new TextEncoder();
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.string({ maxLength: 80 }),
        fc.string({ unit: 'grapheme-ascii', maxLength: 70 }),
      ),
      (s) => {
        const got = utf8Bytes(s);
        assert.deepEqual(got, encoder.encode(s));
        assert.equal(Object.getPrototypeOf(got), Uint8Array.prototype, 'a plain Uint8Array, not a Buffer');
      },
    ),
    { numRuns: 500 },
  );
  assert.deepEqual(utf8Bytes('a\ud800'), Uint8Array.of(0x61, 0xef, 0xbf, 0xbd), 'a lone surrogate becomes U+FFFD');
});
