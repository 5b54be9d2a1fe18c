// Index files: JSON lists of packs and the blobs in each, stored as unpacked files under index/.
// `supersedes` names index files this one replaces (written by prune and index rewrites).
import type { ID } from '../ids/id.ts';
import type { BlobType, PackedBlob } from '../pack/blob.ts';

export interface IndexPack {
  id: ID;
  blobs: PackedBlob[];
}

export interface IndexFile {
  supersedes: ID[];
  packs: IndexPack[];
}

interface RawBlob { id: string; type: string; offset: number; length: number; uncompressed_length?: number }
interface RawIndex { supersedes?: string[] | null; packs?: { id: string; blobs: RawBlob[] | null }[] | null }

export function encodeIndexFile(f: IndexFile): Uint8Array {
  const raw: RawIndex = {
    packs: f.packs.map((p) => ({
      id: p.id,
      blobs: p.blobs.map((b) => {
        const r: RawBlob = { id: b.id, type: b.type, offset: b.offset, length: b.length };
        if (b.uncompressedLength > 0) r.uncompressed_length = b.uncompressedLength;
        return r;
      }),
    })),
  };
  if (f.supersedes.length > 0) raw.supersedes = f.supersedes;
  return Buffer.from(JSON.stringify(f.supersedes.length > 0 ? { supersedes: raw.supersedes, packs: raw.packs } : raw) + '\n');
}

export function decodeIndexFile(bytes: Uint8Array, name: string): IndexFile {
  let raw: RawIndex | unknown[];
  try {
    raw = JSON.parse(Buffer.from(bytes).toString('utf8')) as RawIndex | unknown[];
  } catch (err) {
    throw new Error(`index ${name.slice(0, 8)} is not valid JSON: ${(err as Error).message}`);
  }
  if (Array.isArray(raw)) throw new Error(`index ${name.slice(0, 8)} uses the legacy format, which ferry does not read`);
  const packs = (raw.packs ?? []).map((p) => ({
    id: p.id,
    blobs: (p.blobs ?? []).map((b) => ({
      id: b.id,
      type: blobType(b.type, name),
      offset: b.offset,
      length: b.length,
      uncompressedLength: b.uncompressed_length ?? 0,
    })),
  }));
  return { supersedes: raw.supersedes ?? [], packs };
}

function blobType(t: string, name: string): BlobType {
  if (t === 'data' || t === 'tree') return t;
  throw new Error(`index ${name.slice(0, 8)} has a blob of unknown type "${t}"`);
}
