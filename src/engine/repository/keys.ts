// Finding the key file a password opens, and adding more. Each key file wraps the same master key.
import { hostname, userInfo } from 'node:os';
import type { Backend } from '../backend/backend.ts';
import type { MasterKey } from '../crypto/key.ts';
import {
  createKeyFile,
  InvalidKeyFileError,
  openKeyFile,
  WrongPasswordError as KeyFileWrongPassword,
  type KDFParams,
} from '../crypto/keyfile.ts';
import { WrongPasswordError } from './errors.ts';

export interface OpenedKey {
  key: MasterKey;
  keyID: string;
}

/** Tries every key file; a corrupt one is skipped, so one damaged key cannot lock the others out. */
export async function findKey(backend: Backend, password: string): Promise<OpenedKey> {
  for await (const f of backend.list('key')) {
    let bytes: Uint8Array;
    try {
      bytes = await backend.load({ type: 'key', name: f.name });
    } catch (err) {
      if (backend.isNotExist(err)) continue;
      throw err;
    }
    try {
      return { key: await openKeyFile(bytes, password), keyID: f.name };
    } catch (err) {
      if (err instanceof KeyFileWrongPassword || err instanceof InvalidKeyFileError) continue;
      throw err;
    }
  }
  throw new WrongPasswordError(backend.location);
}

export async function addKey(backend: Backend, key: MasterKey, password: string, params?: KDFParams): Promise<string> {
  const { id, bytes } = await createKeyFile(password, key, { username: safeUser(), hostname: hostname() }, params);
  await backend.save({ type: 'key', name: id }, bytes);
  return id;
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return '';
  }
}
