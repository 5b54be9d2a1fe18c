// Poly1305-AES against the vectors of Bernstein's paper (https://cr.yp.to/mac/poly1305-20050329.pdf),
// which restic also uses for its own MAC tests: r and k as restic stores them, the nonce as the IV.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeMAC, macMatches } from '../../../src/engine/crypto/mac.ts';
import type { MasterKey } from '../../../src/engine/crypto/key.ts';

const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

const vectors = [
  {
    msg: 'f3f6',
    r: '851fc40c3467ac0be05cc20404f3f700',
    k: 'ec074c835580741701425b623235add6',
    nonce: 'fb447350c4e868c52ac3275cf9d4327e',
    mac: 'f4c633c3044fc145f84f335cb81953de',
  },
  {
    msg: '',
    r: 'a0f3080000f46400d0c7e9076c834403',
    k: '75deaa25c09f208e1dc4ce6b5cad3fbf',
    nonce: '61ee09218d29b0aaed7e154a2c5509cc',
    mac: 'dd3fab2251f11ac759f0887129cc2ee7',
  },
  {
    msg: '663cea190ffb83d89593f3f476b6bc24d7e679107ea26adb8caf6652d0656136',
    r: '48443d0bb0d21109c89a100b5ce2c208',
    k: '6acb5f61a7176dd320c5c1eb2edcdc74',
    nonce: 'ae212a55399729595dea458bc621ff0e',
    mac: '0ee1c16bb73f0f4fd19881753c01cdbe',
  },
  {
    msg:
      'ab0812724a7f1e342742cbed374d94d136c6b8795d45b3819830f2c04491faf0' +
      '990c62e48b8018b2c3e4a0fa3134cb67fa83e158c994d961c4cb21095c1bf9',
    r: '12976a08c4426d0ce8a82407c4f48207',
    k: 'e1a5668a4d5b66a5f68cc5424ed5982d',
    nonce: '9ae831e743978d3a23527c7128149e3a',
    mac: '5154ad0d2cb26e01274fc51148491f1b',
  },
];

function keyOf(v: (typeof vectors)[number]): MasterKey {
  return { encrypt: new Uint8Array(32).fill(1), macK: hex(v.k), macR: hex(v.r) };
}

test('Poly1305-AES matches the published vectors', () => {
  for (const v of vectors) {
    assert.equal(Buffer.from(computeMAC(keyOf(v), hex(v.nonce), hex(v.msg))).toString('hex'), v.mac);
  }
});

test('a published tag verifies, and the same tag with one bit flipped does not', () => {
  for (const v of vectors) {
    assert.equal(macMatches(keyOf(v), hex(v.nonce), hex(v.msg), hex(v.mac)), true);
    const bad = hex(v.mac);
    bad[7] ^= 0x10;
    assert.equal(macMatches(keyOf(v), hex(v.nonce), hex(v.msg), bad), false);
  }
});
