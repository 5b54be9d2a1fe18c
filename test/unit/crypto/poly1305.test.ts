// Both Poly1305 kernels against RFC 8439 (§2.5.2 and the edge cases of Appendix A.3, which push the
// final reduction and carries to their limits), then the WebAssembly kernel against the JS reference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { poly1305JS } from '../../../src/engine/crypto/poly1305-js.ts';
import { poly1305Wasm } from '../../../src/engine/crypto/poly1305-wasm.ts';
import { openssl } from '../../../src/engine/crypto/openssl.ts';

const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const rfc8439 = [
  {
    key: '85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b',
    msg: Buffer.from('Cryptographic Forum Research Group').toString('hex'),
    tag: 'a8061dc1305136c6c22b8baf0c0127a9',
  },
  {
    key: '0200000000000000000000000000000000000000000000000000000000000000',
    msg: 'ffffffffffffffffffffffffffffffff',
    tag: '03000000000000000000000000000000',
  },
  {
    key: '02000000000000000000000000000000ffffffffffffffffffffffffffffffff',
    msg: '02000000000000000000000000000000',
    tag: '03000000000000000000000000000000',
  },
  {
    key: '0100000000000000000000000000000000000000000000000000000000000000',
    msg: 'ffffffffffffffffffffffffffffffff' + 'f0ffffffffffffffffffffffffffffff' + '11000000000000000000000000000000',
    tag: '05000000000000000000000000000000',
  },
  {
    key: '0100000000000000000000000000000000000000000000000000000000000000',
    msg: 'ffffffffffffffffffffffffffffffff' + 'fbfefefefefefefefefefefefefefefe' + '01010101010101010101010101010101',
    tag: '00000000000000000000000000000000',
  },
  {
    key: '0200000000000000000000000000000000000000000000000000000000000000',
    msg: 'fdffffffffffffffffffffffffffffff',
    tag: 'faffffffffffffffffffffffffffffff',
  },
  {
    key: '0100000000000000040000000000000000000000000000000000000000000000',
    msg: 'e33594d7505e43b900000000000000003394d7505e4379cd01000000000000000000000000000000000000000000000001000000000000000000000000000000',
    tag: '14000000000000005500000000000000',
  },
  {
    key: '0100000000000000040000000000000000000000000000000000000000000000',
    msg: 'e33594d7505e43b900000000000000003394d7505e4379cd010000000000000000000000000000000000000000000000',
    tag: '13000000000000000000000000000000',
  },
];

for (const [name, mac] of [
  ['JS', poly1305JS],
  ['WebAssembly', poly1305Wasm],
] as const) {
  test(`${name} Poly1305 matches the RFC 8439 vectors`, () => {
    for (const v of rfc8439) assert.equal(toHex(mac(hex(v.msg), hex(v.key))), v.tag, `message ${v.msg}`);
  });
}

test('WebAssembly Poly1305 equals the JS reference on arbitrary keys and messages', () => {
  fc.assert(
    // the length is drawn explicitly: fast-check's default array sizes stay below a single block
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.integer({ min: 0, max: 400 }), (key, length) => {
      const msg = randomBytes(length);
      assert.equal(toHex(poly1305Wasm(msg, key)), toHex(poly1305JS(msg, key)));
    }),
    { numRuns: 500 },
  );
});

test('WebAssembly Poly1305 equals the JS reference across its 64 KiB copy window and on all-ones input', () => {
  const key = new Uint8Array(32).fill(0xff);
  for (const size of [65535, 65536, 65537, 65536 * 2 + 15, 300_000]) {
    const msg = new Uint8Array(size).map((_, i) => (i * 131 + 7) & 0xff);
    assert.equal(toHex(poly1305Wasm(msg, key)), toHex(poly1305JS(msg, key)), `size ${size}`);
    msg.fill(0xff);
    assert.equal(toHex(poly1305Wasm(msg, key)), toHex(poly1305JS(msg, key)), `all-ones size ${size}`);
  }
});

test("OpenSSL's Poly1305 (through Node's own OpenSSL) matches the RFC 8439 vectors and the WebAssembly kernel", () => {
  // the machines ferry ships to and tests on run Node's official builds, which export OpenSSL's symbols
  const native = openssl();
  assert.ok(native, 'Node exports no OpenSSL EVP symbols here');
  const mac = native.poly1305.bind(native);
  for (const v of rfc8439) assert.equal(toHex(mac(hex(v.msg), hex(v.key))), v.tag, `message ${v.msg}`);
  for (const size of [0, 1, 15, 16, 17, 2047, 2048, 65537, 1 << 20]) {
    const key = randomBytes(32);
    const msg = randomBytes(size);
    assert.equal(toHex(mac(msg, key)), toHex(poly1305Wasm(msg, key)), `size ${size}`);
    msg.fill(0xff);
    key.fill(0xff);
    assert.equal(toHex(mac(msg, key)), toHex(poly1305Wasm(msg, key)), `all-ones size ${size}`);
  }
});
