// A client of Kubernetes' SnapshotMetadata API (KEP-3314): the allocated ranges of a block snapshot, and the ranges
// changed between two snapshots of one volume, as the CSI driver's csi-snapshot-metadata sidecar streams them. The
// caller brings a ServiceAccount token for the service's audience; the sidecar checks that its owner may get the
// VolumeSnapshots named.
import { normalizeRanges, type ByteRange } from '../../engine/operations/blocks.ts';
import { serverStream, type GrpcTarget } from './grpc-call.ts';
import { decodeMetadataResponse, encodeAllocatedRequest, encodeDeltaRequest } from './proto.ts';

const service = '/snapshotmetadata.SnapshotMetadata';

/** past this many ranges (after merging adjacent ones) a list is refused: a full read costs less than its memory */
export const maxRanges = 1 << 20;

export interface BlockList {
  /** volume_capacity_bytes as the service reported it (the same in every response, or the list is refused) */
  capacity: number;
  /** in order, adjacent and overlapping ranges merged, clipped to the capacity */
  ranges: ByteRange[];
}

export interface MetadataCall {
  target: GrpcTarget;
  token: string;
  namespace: string;
  signal?: AbortSignal;
}

/** The allocated ranges of VolumeSnapshot `snapshotName`. */
export function getAllocated(c: MetadataCall, snapshotName: string): Promise<BlockList> {
  const request = encodeAllocatedRequest({ securityToken: c.token, namespace: c.namespace, snapshotName });
  return collect(c, 'GetMetadataAllocated', request);
}

/** The ranges of VolumeSnapshot `targetSnapshotName` changed since the CSI snapshot `baseSnapshotId`. */
export function getDelta(c: MetadataCall, baseSnapshotId: string, targetSnapshotName: string): Promise<BlockList> {
  const request = encodeDeltaRequest({
    securityToken: c.token,
    namespace: c.namespace,
    baseSnapshotId,
    targetSnapshotName,
  });
  return collect(c, 'GetMetadataDelta', request);
}

async function collect(c: MetadataCall, method: string, request: Uint8Array): Promise<BlockList> {
  let capacity: number | undefined;
  const ranges: ByteRange[] = [];
  await serverStream(
    c.target,
    `${service}/${method}`,
    request,
    (bytes) => {
      const r = decodeMetadataResponse(bytes);
      if (capacity !== undefined && r.volumeCapacityBytes !== capacity)
        throw new Error(`${method}: volume_capacity_bytes changed from ${capacity} to ${r.volumeCapacityBytes}`);
      capacity = r.volumeCapacityBytes;
      for (const b of r.blockMetadata) {
        const last = ranges.at(-1);
        const lastEnd = last ? last.offset + last.length : 0;
        if (last && b.byteOffset >= last.offset && b.byteOffset <= lastEnd) {
          // adjacent to or inside the previous range: merged as it comes, so a fixed-length list stays small
          last.length = Math.max(lastEnd, b.byteOffset + b.sizeBytes) - last.offset;
          continue;
        }
        ranges.push({ offset: b.byteOffset, length: b.sizeBytes });
        if (ranges.length > maxRanges) throw new Error(`${method}: more than ${maxRanges} separate ranges`);
      }
    },
    c.signal,
  );
  if (capacity === undefined) throw new Error(`${method}: the service sent no response message`);
  // the service promises ascending offsets; a list that breaks it is still right once sorted and merged
  return { capacity, ranges: normalizeRanges(ranges, capacity) };
}
