// Restoring a block backup into a new claim of another namespace, and reading devices whole, for the block suites.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { claims, dataDownload, downloads, volumePath, watchUntil } from './world.ts';
import type { Obj, World } from './world.ts';

/** Restores DataUpload `from` into a new claim `claim` of `namespace`; the finished DataDownload and the claim. */
export async function restoreInto(
  w: World,
  from: { namespace: string; name: string },
  namespace: string,
  claim: string,
  timeoutMs: number,
): Promise<{ down: Obj; pvc: Obj; path: string }> {
  const name = `${claim}-restore`;
  await w.cluster.kube.create(
    downloads(namespace),
    dataDownload(name, w.location, { targetPVC: { name: claim }, source: { dataUpload: from } }),
  );
  const down = (
    await watchUntil(w.cluster, `${downloads(namespace)}/${name}`, ['Completed', 'Failed', 'Canceled'], timeoutMs)
  ).final;
  assert.equal(down.status.phase, 'Completed', down.status.message);
  const pvc = await w.cluster.kube.get(`${claims(namespace)}/${claim}`);
  return { down, pvc, path: await volumePath(w.cluster, pvc.spec.volumeName) };
}

/** SHA-256 of a whole device or image, read as a stream (they run to gigabytes). */
export async function sha(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const piece of createReadStream(path)) h.update(piece as Buffer);
  return h.digest('hex');
}
