// Twenty DataUploads at once under the shipped per-node transfer limit (deploy/config.yaml): at no moment do more
// transfers run on a node than the limit allows, the others wait with a Queued condition saying why, and all of
// them complete. The first transfers are held (SIGSTOP from the host) until one DataUpload is seen queued: a small
// transfer ends faster than a step pod starts, so unheld they would seldom all run at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { boundClaim, dataUpload, ferryNamespace, stepPids, uploads, watchUntil, world } from './world.ts';
import type { Obj, World } from './world.ts';

const count = 20;
let w: World & { app: string; other: string };
let perNode: number;

before(async () => {
  w = await world('limits', () => ({}));
  const config = await w.cluster.kube.get(`/api/v1/namespaces/${ferryNamespace}/configmaps/ferry-config`);
  perNode = Number(config.data.FERRY_MAX_TRANSFERS_PER_NODE);
  assert.ok(perNode > 0, 'deploy/config.yaml sets no per-node limit');
  const { path } = await boundClaim(w.cluster, w.app, 'data', '64Mi');
  // enough data that transfers overlap
  for (let i = 0; i < 8; i++) {
    await mkdir(join(path, `dir-${i}`), { recursive: true });
    await writeFile(join(path, `dir-${i}`, 'blob'), randomBytes(1 << 20));
  }
  // one backup first makes the repository: twenty transfers racing to create it is the engine's business, not this test's
  await w.cluster.kube.create(uploads(w.app), dataUpload('first', w.location));
  const first = await watchUntil(
    w.cluster,
    `${uploads(w.app)}/first`,
    ['Completed', 'Failed', 'Canceled'],
    10 * 60_000,
  );
  assert.equal(first.final.status.phase, 'Completed', first.final.status.message);
});

after(async () => {
  await w?.cluster.kube.delete(
    `/apis/ferry.dev/v1alpha1/namespaces/${ferryNamespace}/backupstoragelocations/${w.location}`,
  );
  await w?.cluster.cleanup();
});

describe('twenty DataUploads at once', () => {
  it(`never run more transfers on a node than the limit, queue the rest, and all complete`, async (t) => {
    const held: number[] = [];
    const release = (): void => {
      for (const pid of held.splice(0))
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // it was killed meanwhile
        }
    };
    t.after(release);
    const names = Array.from({ length: count }, (_, i) => `du-${String(i).padStart(2, '0')}`);
    await Promise.all(names.map((n) => w.cluster.kube.create(uploads(w.app), dataUpload(n, w.location))));
    const deadline = Date.now() + 20 * 60_000;
    let peak = 0;
    let queuedSeen = '';
    for (;;) {
      const items: Obj[] = (await w.cluster.kube.get(uploads(w.app))).items.filter(
        (d: Obj) => d.metadata.name !== 'first',
      );
      const running = items.filter((d) => d.status?.phase === 'InProgress');
      const byNode = new Map<string, number>();
      for (const d of running) byNode.set(d.status.node ?? '?', (byNode.get(d.status.node ?? '?') ?? 0) + 1);
      for (const [node, n] of byNode) {
        if (node !== '?')
          assert.ok(
            n <= perNode,
            `${n} transfers in progress on ${node}, limit ${perNode}: ${running.map((d) => `${d.metadata.name}@${d.status.node}`).join(', ')}`,
          );
        peak = Math.max(peak, n);
      }
      assert.ok(
        running.length <= perNode * w.cluster.nodes.length,
        `${running.length} transfers in progress on ${w.cluster.nodes.length} nodes`,
      );
      queuedSeen ||=
        items
          .map((d) => d.status?.conditions?.find((c: Obj) => c.type === 'Queued' && c.status === 'True')?.message)
          .find(Boolean) ?? '';
      if (queuedSeen) release();
      else
        for (const d of running)
          for (const pid of await stepPids('transfer', `DataUpload/${w.app}/${d.metadata.name}`))
            if (!held.includes(pid)) {
              process.kill(pid, 'SIGSTOP');
              held.push(pid);
            }
      const done = items.filter((d) => ['Completed', 'Failed', 'Canceled'].includes(d.status?.phase));
      if (done.length === count) {
        const failed = done
          .filter((d) => d.status.phase !== 'Completed')
          .map((d) => `${d.metadata.name}: ${d.status.phase} ${d.status.message ?? ''}`);
        assert.deepEqual(failed, []);
        break;
      }
      assert.ok(Date.now() < deadline, `only ${done.length} of ${count} finished in time`);
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(peak >= 1, 'no transfer was ever seen in progress');
    assert.match(queuedSeen, /^Waiting for a transfer slot: /, 'no DataUpload was ever queued');
    const snapshots = await w.snapshotsOf(w.app);
    assert.equal(snapshots.length, count + 1);
  });
});
