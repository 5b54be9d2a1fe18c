// What the CSI driver's SnapshotMetadataService (Kubernetes' changed-block tracking) says of a block volume being
// backed up: the blocks changed since the parent backup's snapshot, else the allocated blocks. Anything in the way
// (no service for the driver, the parent's storage snapshot gone, a refused token, a broken answer) is not an error
// of the backup: the device is then read more fully, and the reason lands in status.changeTracking.reason.
import { readFile } from 'node:fs/promises';
import type { DataUpload } from '../../shared/api/types.ts';
import { getAllocated, getDelta, type BlockList, type MetadataCall } from '../../shared/cbt/client.ts';
import type { ByteRange } from '../../engine/operations/blocks.ts';
import type { BlockChanges } from '../../engine/operations/blocks.ts';
import type { SnapshotEntry } from '../../engine/operations/snapshots.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { StepContext } from '../context.ts';

const serviceAccountToken = '/var/run/secrets/kubernetes.io/serviceaccount/token';
/** the token the service checks lives only as long as a transfer is likely to ask with it */
const tokenSeconds = 600;
/** status.changeTracking.reason's limit */
const maxReason = 1024;

interface SnapshotMetadataService extends KubeObject {
  spec: { address: string; caCert: string; audience: string };
}

/**
 * Changed-block tracking for `du`'s device of `size` bytes, given the parent snapshot the backup chose.
 * `ownToken` reads the pod's own ServiceAccount token (tests give theirs).
 */
export async function blockChanges(
  ctx: StepContext,
  du: DataUpload,
  size: number | undefined,
  parent: SnapshotEntry | undefined,
  ownToken: () => Promise<string> = () => readFile(serviceAccountToken, 'utf8'),
): Promise<BlockChanges> {
  const got = await askTracking(ctx, du, size, parent, ownToken);
  // the reason quotes what the service said, and status keeps at most maxReason characters of it
  if (got.reason && got.reason.length > maxReason) got.reason = `${got.reason.slice(0, maxReason - 1)}…`;
  return got;
}

async function askTracking(
  ctx: StepContext,
  du: DataUpload,
  size: number | undefined,
  parent: SnapshotEntry | undefined,
  ownToken: () => Promise<string>,
): Promise<BlockChanges> {
  const driver = du.status?.changeTracking?.driver;
  const target = du.status?.exposure?.volumeSnapshot;
  if (!driver || !target) return { reason: 'the expose step recorded no CSI driver or exposed VolumeSnapshot' };
  let call: MetadataCall;
  try {
    const found = await ctx.kube.get<SnapshotMetadataService>({ kind: 'SnapshotMetadataService', name: driver });
    if (!found) return { reason: `the CSI driver ${driver} offers no SnapshotMetadataService` };
    call = {
      target: { address: found.spec.address, ca: Buffer.from(found.spec.caCert, 'base64') },
      token: await audienceToken(ctx, found.spec.audience, await ownToken()),
      namespace: ctx.ferryNamespace,
      signal: ctx.signal,
    };
  } catch (err) {
    return { reason: `the SnapshotMetadataService of ${driver} cannot be used: ${(err as Error).message}` };
  }
  const reasons: string[] = [];
  const base =
    parent &&
    (await parentHandle(ctx, du, parent.id).catch((err: Error) => {
      reasons.push(`the parent backup cannot be looked up: ${err.message}`);
      return '';
    }));
  if (parent && base === undefined)
    reasons.push(`the parent backup (snapshot ${parent.id.slice(0, 8)}) kept no CSI snapshot`);
  if (parent && base) {
    try {
      const delta = await getDelta(call, base, target);
      return { changed: { since: parent.id, ranges: withTail(delta, size) } };
    } catch (err) {
      reasons.push(`the changed blocks since the parent's CSI snapshot are unavailable: ${(err as Error).message}`);
    }
  }
  try {
    return { allocated: withTail(await getAllocated(call, target), size), reason: reasons.join('; ') || undefined };
  } catch (err) {
    reasons.push(`the allocated blocks are unavailable: ${(err as Error).message}`);
    return { reason: reasons.join('; ') };
  }
}

/**
 * The ranges, plus whatever of the device lies past the snapshot's capacity: the exposed volume may be bigger
 * than the snapshot (a class rounds sizes up), and the service says nothing of bytes it does not hold.
 */
function withTail(list: BlockList, size: number | undefined): ByteRange[] {
  if (size === undefined || size <= list.capacity) return list.ranges;
  return [...list.ranges, { offset: list.capacity, length: size - list.capacity }];
}

/** The CSI snapshot handle the DataUpload that wrote snapshot `id` kept for its successor, if any. */
async function parentHandle(ctx: StepContext, du: DataUpload, id: string): Promise<string | undefined> {
  const all = await ctx.kube.list<DataUpload & KubeObject>('DataUpload', { namespace: du.metadata.namespace });
  const parent = all.find(
    (d) => d.spec.sourcePVC === du.spec.sourcePVC && d.status?.snapshotID === id && d.status.phase === 'Completed',
  );
  return parent?.status?.changeTracking?.retainedContent ? parent.status.changeTracking.snapshotHandle : undefined;
}

/**
 * A token of this pod's ServiceAccount for the service's audience, bound to the pod, so it is worth nothing once
 * the transfer ends. The sidecar checks, with it, that the account may get the exposed VolumeSnapshot.
 */
async function audienceToken(ctx: StepContext, audience: string, own: string): Promise<string> {
  const { namespace, name } = ownAccount(own);
  return ctx.kube.createToken(namespace, name, {
    audiences: [audience],
    expirationSeconds: tokenSeconds,
    boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: ctx.settings.podName },
  });
}

/** The ServiceAccount a pod's own token names (its subject system:serviceaccount:NAMESPACE:NAME). */
export function ownAccount(jwt: string): { namespace: string; name: string } {
  const payload = jwt.trim().split('.')[1] ?? '';
  const sub = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: string }).sub ?? '';
  const m = /^system:serviceaccount:([a-z0-9-]+):([a-z0-9.-]+)$/.exec(sub);
  if (!m) throw new Error(`the pod's token names no ServiceAccount (subject ${JSON.stringify(sub)})`);
  return { namespace: m[1], name: m[2] };
}
