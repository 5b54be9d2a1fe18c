// Seals the new blobs of a small-file batch side by side into one buffer of its own, which then moves to the main
// thread as one transferred ArrayBuffer. Sealed one by one, each blob was a view into Node's Buffer pool, and
// posting them copied whole pool slabs: more copying and garbage than the blobs themselves.
import type { MasterKey } from '../crypto/key.ts';
import { sealOverhead } from '../crypto/seal.ts';
import { blobBody, sealBlobsInto } from '../pack/prepare.ts';
import type { SealedSmall } from './worker-protocol.ts';

export interface SmallPlain {
  id: string;
  data: Uint8Array;
}

export function sealSmallBlobs(
  key: MasterKey,
  compression: boolean,
  plains: SmallPlain[],
): { sealed: Uint8Array; blobs: SealedSmall[] } {
  const bodies = plains.map((p) => ({ id: p.id, ...blobBody(p.data, compression) }));
  const sealed = Buffer.allocUnsafeSlow(bodies.reduce((n, b) => n + b.body.length + sealOverhead, 0));
  const outs: Uint8Array[] = [];
  const blobs: SealedSmall[] = [];
  let at = 0;
  plains.forEach((p, i) => {
    const { body, uncompressedLength } = bodies[i];
    const sealedLength = body.length + sealOverhead;
    outs.push(sealed.subarray(at, at + sealedLength));
    blobs.push({ id: p.id, sealedLength, uncompressedLength, length: p.data.length });
    at += sealedLength;
  });
  sealBlobsInto(key, bodies, outs);
  return { sealed, blobs };
}
