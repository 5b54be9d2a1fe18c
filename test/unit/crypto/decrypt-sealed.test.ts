import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decryptSealed, open, seal, CiphertextError } from '../../../src/shared/crypto/seal.ts';
import { newMasterKey } from '../../../src/shared/crypto/key.ts';
import { randomBytes } from '../../support/repo.ts';

test('decryptSealed reads back what seal wrote without the MAC check that open makes', () => {
  const key = newMasterKey();
  for (const size of [0, 15, 2048, 2049, 100_000]) {
    const plain = randomBytes(size, size + 1);
    const sealed = seal(key, plain);
    assert.ok(Buffer.from(decryptSealed(key, sealed)).equals(Buffer.from(plain)), `${size} bytes`);
    if (size === 0) continue;
    const tagFlipped = Uint8Array.from(sealed);
    tagFlipped[tagFlipped.length - 1] ^= 1;
    assert.throws(() => open(key, tagFlipped), CiphertextError);
    assert.ok(Buffer.from(decryptSealed(key, tagFlipped)).equals(Buffer.from(plain)), 'the tag is not read');
  }
  assert.throws(() => decryptSealed(key, new Uint8Array(31)), CiphertextError);
});
