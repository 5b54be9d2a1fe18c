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

export function encodeIndexFile(f: IndexFile): Uint8Array {
  const head = f.supersedes.length > 0 ? `{"supersedes":${JSON.stringify(f.supersedes)},"packs":[` : '{"packs":[';
  // the file is written into a buffer of exactly its size: one of a bound per blob was 40% more than the JSON, and
  // an index file of 50k tiny files' blobs is 7.5 MB
  const out = Buffer.allocUnsafe(encodedLength(f, head));
  // ids are hex and the rest is ASCII, so latin1 writes each character as one byte
  let at = out.write(head, 0, 'latin1');
  f.packs.forEach((p, i) => {
    at += out.write(packStart(i, p.id), at, 'latin1');
    let sep = '';
    asBlobList(p.blobs).forEachBlob((b) => {
      const id = b.ids.toString('hex', b.at, b.at + 32);
      at += out.write(sep + blobEntry(id, b.type, b.offset, b.length, b.uncompressedLength), at, 'latin1');
      sep = ',';
    });
    at += out.write(packEnd, at, 'latin1');
  });
  at += out.write(fileEnd, at, 'latin1');
  if (at !== out.length) throw new Error(`index file encoded to ${at} bytes where ${out.length} were counted`);
  return out;
}

const packStart = (i: number, id: ID) => `${i > 0 ? ',' : ''}{"id":"${id}","blobs":[`;
const packEnd = ']}';
const fileEnd = ']}\n';

function blobEntry(id: string, type: BlobType, offset: number, length: number, uncompressed: number): string {
  const tail = uncompressed > 0 ? `,"uncompressed_length":${uncompressed}}` : '}';
  return `{"id":"${id}","type":"${type}","offset":${offset},"length":${length}${tail}`;
}

// an entry's bytes besides its id, type and numbers, taken from the template so the two cannot disagree
const entryFixed = blobEntry('', 'data', 0, 0, 0).length - 'data'.length - 2;
const uncompressedFixed = blobEntry('', 'data', 0, 0, 1).length - blobEntry('', 'data', 0, 0, 0).length - 1;

function encodedLength(f: IndexFile, head: string): number {
  let n = head.length + fileEnd.length;
  f.packs.forEach((p, i) => {
    n += packStart(i, p.id).length + packEnd.length + Math.max(0, p.blobs.length - 1);
    asBlobList(p.blobs).forEachBlob((b) => {
      n += entryFixed + 64 + b.type.length + digits(b.offset) + digits(b.length);
      if (b.uncompressedLength > 0) n += uncompressedFixed + digits(b.uncompressedLength);
    });
  });
  return n;
}

function digits(n: number): number {
  let d = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) d++;
  return d;
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
 * references its parent, so the pack ids a blob table keeps held every index file's whole text, the whole restore
 * long. Blob ids need no copy: the table keeps bytes.
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
