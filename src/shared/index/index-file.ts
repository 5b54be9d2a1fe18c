// Index files: JSON lists of packs and the blobs in each, stored as unpacked files under index/.
// `supersedes` names index files this one replaces (written by prune and index rewrites).
// A repository of a million tiny files has index files of tens of thousands of blobs each, so both directions work
// blob by blob: encoding writes straight into the file's bytes, and reading hands each blob to the caller instead of
// building the whole document as objects (which put the peak of a restore of 1M files at loading its index).
import { isAscii } from 'node:buffer';
import type { ID } from '../ids/id.ts';
import { asBlobList, type BlobList, type BlobType, type PackedBlob } from '../pack/blob.ts';
import { JsonReader } from '../tree/jsonreader.ts';

export interface IndexPack {
  id: ID;
  blobs: readonly PackedBlob[] | BlobList;
}

export interface IndexFile {
  supersedes: ID[];
  packs: IndexPack[];
}

/** Bytes one blob's entry can take: a 64-digit id, the longest type name, three numbers of up to 16 digits, syntax. */
const blobBound = 200;
const idBound = 72;

export function encodeIndexFile(f: IndexFile): Uint8Array {
  let bound = 32 + f.supersedes.length * idBound;
  for (const p of f.packs) bound += 32 + idBound + p.blobs.length * blobBound;
  const out = Buffer.allocUnsafe(bound);
  // ids are hex and the rest is ASCII, so latin1 writes each character as one byte
  let at = out.write(f.supersedes.length > 0 ? `{"supersedes":${JSON.stringify(f.supersedes)},"packs":[` : '{"packs":[', 0, 'latin1');
  f.packs.forEach((p, i) => {
    at += out.write(`${i > 0 ? ',' : ''}{"id":"${p.id}","blobs":[`, at, 'latin1');
    let sep = '';
    asBlobList(p.blobs).forEachBlob((b) => {
      const id = b.ids.toString('hex', b.at, b.at + 32);
      const tail = b.uncompressedLength > 0 ? `,"uncompressed_length":${b.uncompressedLength}}` : '}';
      at += out.write(`${sep}{"id":"${id}","type":"${b.type}","offset":${b.offset},"length":${b.length}${tail}`, at, 'latin1');
      sep = ',';
    });
    at += out.write(']}', at, 'latin1');
  });
  at += out.write(']}\n', at, 'latin1');
  return out.subarray(0, at);
}

/**
 * An index file's text. Index files are ASCII (hex ids, field names), which latin1 decodes to the same text for a
 * fraction of the time. The bytes are garbage once this returns: callers read the text without holding them, as the
 * two together are twice the file (29 MB each for an index file of 210k blobs).
 */
export function indexText(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buf.toString(isAscii(buf) ? 'latin1' : 'utf8');
}

/**
 * Reads an index file's text (see indexText), calling `onBlob` for each blob with the pack that holds it; returns
 * the ids it supersedes. Unknown fields are skipped, as restic's decoder does.
 */
export function readIndexFile(text: string, name: string, onBlob: (pack: ID, blob: PackedBlob) => void): ID[] {
  const what = `index ${name.slice(0, 8)}`;
  if (/^\s*\[/.test(text.slice(0, 64))) throw new Error(`${what} uses the legacy format, which ferry does not read`);
  const r = new JsonReader(text, what);
  let supersedes: ID[] = [];
  r.readObject((key) => {
    if (key === 'supersedes') supersedes = r.readNull() ? [] : r.readStringArray().map(own);
    else if (key === 'packs') {
      if (!r.readNull()) r.readArray(() => readPack(r, what, onBlob));
    } else r.skip();
  });
  r.end();
  return supersedes;
}

function readPack(r: JsonReader, what: string, onBlob: (pack: ID, blob: PackedBlob) => void): void {
  let pack: ID | undefined;
  // blobs listed before the pack's id (no encoder does that, but JSON allows it) wait for the id
  const early: PackedBlob[] = [];
  r.readObject((key) => {
    if (key === 'id') pack = own(r.readString());
    else if (key === 'blobs') {
      if (r.readNull()) return;
      r.readArray(() => {
        const b = readBlob(r, what);
        if (pack === undefined) early.push(b);
        else onBlob(pack, b);
      });
    } else r.skip();
  });
  if (pack === undefined) throw new Error(`${what} lists a pack without an id`);
  for (const b of early) onBlob(pack, b);
}

/**
 * A copy of a string read from the text that does not keep the text alive: V8 makes a substring a slice that
 * references its parent, so the pack ids a blob table keeps held every index file's whole text (140 MiB of external
 * strings for the index of a million blobs, the whole restore long). Blob ids need no copy: the table keeps bytes.
 */
function own(s: string): string {
  return Buffer.from(s).toString();
}

function readBlob(r: JsonReader, what: string): PackedBlob {
  const b: PackedBlob = { id: '', type: 'data', offset: 0, length: 0, uncompressedLength: 0 };
  let type = '';
  r.readObject((key) => {
    if (key === 'id') b.id = r.readString();
    else if (key === 'type') type = r.readString();
    else if (key === 'offset') b.offset = readUnsigned(r, key, what);
    else if (key === 'length') b.length = readUnsigned(r, key, what);
    else if (key === 'uncompressed_length') b.uncompressedLength = r.readNull() ? 0 : readUnsigned(r, key, what);
    else r.skip();
  });
  b.type = blobType(type, what);
  return b;
}

function readUnsigned(r: JsonReader, field: string, what: string): number {
  const n = r.readSafeInteger(field);
  if (n < 0) throw new Error(`${what} field "${field}" holds ${n}, which is not an unsigned integer`);
  return n;
}

function blobType(t: string, what: string): BlobType {
  if (t === 'data' || t === 'tree') return t;
  throw new Error(`${what} has a blob of unknown type "${t}"`);
}
