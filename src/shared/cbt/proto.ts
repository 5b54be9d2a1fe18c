// The protobuf messages of Kubernetes' SnapshotMetadata service (external-snapshot-metadata v0.2.0,
// proto/schema.proto, package snapshotmetadata), encoded and decoded by hand: two requests out, one response shape
// in (GetMetadataAllocatedResponse and GetMetadataDeltaResponse have the same fields). A response comes from a
// network peer, so every field is checked and a malformed one is an error naming it, never a guessed value.

export interface AllocatedRequest {
  securityToken: string;
  namespace: string;
  snapshotName: string;
  startingOffset?: number;
  maxResults?: number;
}

export interface DeltaRequest {
  securityToken: string;
  namespace: string;
  /** the CSI driver's handle of the base snapshot (its VolumeSnapshotContent's status.snapshotHandle) */
  baseSnapshotId: string;
  targetSnapshotName: string;
  startingOffset?: number;
  maxResults?: number;
}

export interface BlockMetadata {
  byteOffset: number;
  sizeBytes: number;
}

export interface MetadataResponse {
  /** 0 UNKNOWN, 1 FIXED_LENGTH, 2 VARIABLE_LENGTH */
  blockMetadataType: number;
  volumeCapacityBytes: number;
  blockMetadata: BlockMetadata[];
}

export function encodeAllocatedRequest(r: AllocatedRequest): Buffer {
  return message([
    [1, r.securityToken],
    [2, r.namespace],
    [3, r.snapshotName],
    [4, r.startingOffset ?? 0],
    [5, r.maxResults ?? 0],
  ]);
}

export function encodeDeltaRequest(r: DeltaRequest): Buffer {
  return message([
    [1, r.securityToken],
    [2, r.namespace],
    [3, r.baseSnapshotId],
    [4, r.targetSnapshotName],
    [5, r.startingOffset ?? 0],
    [6, r.maxResults ?? 0],
  ]);
}

/** proto3: fields at their default (empty string, zero) are left out */
function message(fields: [number, string | number][]): Buffer {
  const parts: Buffer[] = [];
  for (const [field, value] of fields) {
    if (typeof value === 'string') {
      if (value === '') continue;
      const bytes = Buffer.from(value, 'utf8');
      parts.push(varint((field << 3) | 2), varint(bytes.length), bytes);
    } else if (value !== 0) {
      if (!Number.isSafeInteger(value) || value < 0)
        throw new RangeError(`field ${field} must be a non-negative integer`);
      parts.push(varint(field << 3), varint(value));
    }
  }
  return Buffer.concat(parts);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = BigInt(n);
  do {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? low | 0x80 : low);
  } while (v > 0n);
  return Buffer.from(out);
}

/** A reader over one message's bytes. */
class Reader {
  pos = 0;
  readonly bytes: Uint8Array;
  readonly what: string;
  constructor(bytes: Uint8Array, what: string) {
    this.bytes = bytes;
    this.what = what;
  }

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  /** A varint as a bigint (int64 values up to 10 bytes). */
  varint(): bigint {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.bytes.length) throw new Error(`${this.what}: a varint runs past the end of the message`);
      const b = this.bytes[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return BigInt.asIntN(64, v);
    }
    throw new Error(`${this.what}: a varint is longer than 10 bytes`);
  }

  bytesField(): Uint8Array {
    const length = this.varint();
    if (length < 0n || length > BigInt(this.bytes.length - this.pos))
      throw new Error(`${this.what}: a field of ${length} bytes runs past the end of the message`);
    const start = this.pos;
    this.pos += Number(length);
    return this.bytes.subarray(start, this.pos);
  }

  skip(wire: number, field: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.bytesField();
    else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (this.pos + n > this.bytes.length) throw new Error(`${this.what}: field ${field} runs past the end`);
      this.pos += n;
    } else throw new Error(`${this.what}: field ${field} has wire type ${wire}, which this message cannot hold`);
  }
}

/** A non-negative int64 that a JavaScript number holds exactly. */
function size(v: bigint, what: string): number {
  if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER))
    throw new Error(`${what} is ${v}: it must be between 0 and ${Number.MAX_SAFE_INTEGER}`);
  return Number(v);
}

export function decodeMetadataResponse(bytes: Uint8Array): MetadataResponse {
  const r = new Reader(bytes, 'SnapshotMetadata response');
  const out: MetadataResponse = { blockMetadataType: 0, volumeCapacityBytes: 0, blockMetadata: [] };
  while (!r.done) {
    const key = r.varint();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (field === 1 && wire === 0) out.blockMetadataType = Number(BigInt.asIntN(32, r.varint()));
    else if (field === 2 && wire === 0) out.volumeCapacityBytes = size(r.varint(), 'volume_capacity_bytes');
    else if (field === 3 && wire === 2) out.blockMetadata.push(decodeBlock(r.bytesField(), out.blockMetadata.length));
    else r.skip(wire, field);
  }
  return out;
}

function decodeBlock(bytes: Uint8Array, index: number): BlockMetadata {
  const what = `block_metadata[${index}]`;
  const r = new Reader(bytes, what);
  const out: BlockMetadata = { byteOffset: 0, sizeBytes: 0 };
  while (!r.done) {
    const key = r.varint();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (field === 1 && wire === 0) out.byteOffset = size(r.varint(), `${what}.byte_offset`);
    else if (field === 2 && wire === 0) out.sizeBytes = size(r.varint(), `${what}.size_bytes`);
    else r.skip(wire, field);
  }
  return out;
}
