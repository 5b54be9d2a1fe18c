// Key files (`keys/<id>`): the master key sealed under a password-derived user key, in restic's JSON.
// Many key files may wrap the same master key; the id is the SHA-256 of the file's bytes.

import { hostname as osHostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { hashID } from '../ids/id.ts';
import { assertUsableMasterKey, decodeMasterKeyJSON, encodeMasterKeyJSON, type MasterKey } from './key.ts';
import { assertKDFParams, defaultKDFParams, deriveUserKey, saltSize, type KDFParams } from './kdf.ts';
import { CiphertextError, open, seal } from './seal.ts';

export type { KDFParams } from './kdf.ts';

export interface KeyFileMeta {
  username: string;
  hostname: string;
  created?: Date;
}

/** The password does not open this key file (its MAC does not verify under the derived key). */
export class WrongPasswordError extends Error {
  override name = 'WrongPasswordError';
}

/** The bytes are not a key file restic could read: bad JSON, missing fields, unknown KDF. */
export class InvalidKeyFileError extends Error {
  override name = 'InvalidKeyFileError';
}

interface KeyFileJSON {
  created: string;
  username: string;
  hostname: string;
  kdf: 'scrypt';
  N: number;
  r: number;
  p: number;
  salt: string;
  data: string;
}

export async function createKeyFile(
  password: string,
  key: MasterKey,
  meta: KeyFileMeta,
  params: KDFParams = defaultKDFParams,
): Promise<{ id: string; bytes: Uint8Array }> {
  assertUsableMasterKey(key);
  assertKDFParams(params);
  const salt = randomBytes(saltSize);
  const userKey = await deriveUserKey(password, salt, params);
  // Field order follows restic's struct so our files look like its own.
  const doc: KeyFileJSON = {
    created: (meta.created ?? new Date()).toISOString(),
    username: meta.username,
    hostname: meta.hostname || osHostname(),
    kdf: 'scrypt',
    N: params.N,
    r: params.r,
    p: params.p,
    salt: salt.toString('base64'),
    data: Buffer.from(seal(userKey, encodeMasterKeyJSON(key))).toString('base64'),
  };
  const bytes = Buffer.from(JSON.stringify(doc), 'utf8');
  return { id: hashID(bytes), bytes };
}

export async function openKeyFile(bytes: Uint8Array, password: string): Promise<MasterKey> {
  const doc = parseKeyFile(bytes);
  const userKey = await deriveUserKey(password, Buffer.from(doc.salt, 'base64'), { N: doc.N, r: doc.r, p: doc.p });
  let masterJSON: Uint8Array;
  try {
    masterJSON = open(userKey, Buffer.from(doc.data, 'base64'));
  } catch (err) {
    if (err instanceof CiphertextError) throw new WrongPasswordError('The password does not open this key file.');
    throw err;
  }
  try {
    return decodeMasterKeyJSON(masterJSON);
  } catch (err) {
    throw new InvalidKeyFileError(`The key file opened but holds no usable master key: ${(err as Error).message}`);
  }
}

/** Reads the unencrypted part of a key file (who made it, when, KDF settings) without a password. */
export function parseKeyFile(bytes: Uint8Array): KeyFileJSON {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    throw new InvalidKeyFileError('The key file is not valid JSON.');
  }
  if (doc === null || typeof doc !== 'object') throw new InvalidKeyFileError('The key file is not a JSON object.');
  if (doc.kdf !== 'scrypt')
    throw new InvalidKeyFileError(`The key file uses KDF "${String(doc.kdf)}"; only scrypt is supported.`);
  for (const f of ['N', 'r', 'p'] as const) {
    if (typeof doc[f] !== 'number')
      throw new InvalidKeyFileError(`The key file field "${f}" is missing or not a number.`);
  }
  for (const f of ['salt', 'data'] as const) {
    if (typeof doc[f] !== 'string')
      throw new InvalidKeyFileError(`The key file field "${f}" is missing or not base64 text.`);
  }
  try {
    assertKDFParams({ N: doc.N as number, r: doc.r as number, p: doc.p as number });
  } catch (err) {
    throw new InvalidKeyFileError(`The key file has unusable scrypt parameters: ${(err as Error).message}`);
  }
  if (Buffer.from(doc.salt as string, 'base64').length !== saltSize) {
    throw new InvalidKeyFileError(`The key file salt is not ${saltSize} bytes of base64.`);
  }
  return {
    created: typeof doc.created === 'string' ? doc.created : '',
    username: typeof doc.username === 'string' ? doc.username : '',
    hostname: typeof doc.hostname === 'string' ? doc.hostname : '',
    kdf: 'scrypt',
    N: doc.N as number,
    r: doc.r as number,
    p: doc.p as number,
    salt: doc.salt as string,
    data: doc.data as string,
  };
}
