// A folder's entry names as bytes, in the byte-wise order trees keep them. Read as strings and encoded here when every
// name is UTF-8: for names as bytes Node makes a Buffer each in C++, which costs more than strings encoded in
// JavaScript. A name that is not UTF-8 decodes with U+FFFD, and then the folder is read again as bytes, so every
// name is kept exactly.
import { readdirSync } from 'node:fs';
import { compareNames } from '../tree/node.ts';
import { utf8Bytes } from '../tree/goutf8.ts';

export function listNames(dir: Buffer): Uint8Array[] {
  const names = readdirSync(dir);
  const bytes = new Array<Uint8Array>(names.length);
  for (let i = 0; i < names.length; i++) {
    if (names[i].includes('\uFFFD')) return readdirSync(dir, { encoding: 'buffer' }).sort(compareNames);
    bytes[i] = utf8Bytes(names[i]);
  }
  return bytes.sort(compareNames);
}
