// The repository master key: one AES-256 key for AES-CTR and the two halves of a Poly1305-AES key.
// Its JSON form is what a key file carries encrypted in `data`, byte for byte as restic writes it.

import { randomBytes } from 'node:crypto';

export interface MasterKey {
  /** AES-256 key for the CTR keystream. */
  encrypt: Uint8Array;
  /** AES-128 key that turns each IV into the Poly1305 `s` half. */
  macK: Uint8Array;
  /** Poly1305 `r`, stored unclamped; the MAC clamps it at use. */
  macR: Uint8Array;
}

export const encryptKeySize = 32;
export const macKeyHalfSize = 16;

export function newMasterKey(): MasterKey {
  return {
    encrypt: randomBytes(encryptKeySize),
    macK: randomBytes(macKeyHalfSize),
    macR: randomBytes(macKeyHalfSize),
  };
}

/** Throws unless every part has its exact size and none is all zeros (restic refuses zero keys too). */
export function assertUsableMasterKey(key: MasterKey): void {
  assertKeyPart(key.encrypt, encryptKeySize, 'encryption key');
  assertKeyPart(key.macK, macKeyHalfSize, 'MAC key k');
  assertKeyPart(key.macR, macKeyHalfSize, 'MAC key r');
}

function assertKeyPart(part: Uint8Array, size: number, what: string): void {
  if (!(part instanceof Uint8Array) || part.length !== size) {
    throw new Error(`The ${what} must be ${size} bytes.`);
  }
  if (part.every((b) => b === 0)) {
    throw new Error(`The ${what} is all zeros.`);
  }
}

/** restic's order and field names: {"mac":{"k":..,"r":..},"encrypt":..}, bytes as padded base64. */
export function encodeMasterKeyJSON(key: MasterKey): Uint8Array {
  const doc = { mac: { k: base64(key.macK), r: base64(key.macR) }, encrypt: base64(key.encrypt) };
  return Buffer.from(JSON.stringify(doc), 'utf8');
}

export function decodeMasterKeyJSON(json: Uint8Array): MasterKey {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8'));
  } catch {
    throw new Error('The decrypted master key is not valid JSON.');
  }
  const d = doc as { mac?: { k?: unknown; r?: unknown }; encrypt?: unknown } | null;
  const key = {
    encrypt: fromBase64(d?.encrypt, 'encrypt'),
    macK: fromBase64(d?.mac?.k, 'mac.k'),
    macR: fromBase64(d?.mac?.r, 'mac.r'),
  };
  assertUsableMasterKey(key);
  return key;
}

function base64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

function fromBase64(v: unknown, field: string): Uint8Array {
  if (typeof v !== 'string') throw new Error(`The master key field "${field}" is missing or not a string.`);
  return new Uint8Array(Buffer.from(v, 'base64'));
}
