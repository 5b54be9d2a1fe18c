// The steps in real containers of ferry's image: the container runtime enforces each step template's
// securityContext. A backup's transfer reads files of other owners behind 0600/0700 modes with the one capability its
// template holds, and a restore writes their owners and modes back; a restore's container without its capabilities
// cannot, and no restricted step can write its root filesystem.
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stepNames } from '../../src/shared/api/types.ts';
import { templateName } from '../../src/shared/step-job/job.ts';
import { podFinished, podsPath } from '../cluster/testing.ts';
import { compareTrees } from '../support/compare-tree.ts';
import {
  boundClaim,
  claims,
  dataDownload,
  downloads,
  ferryNamespace,
  volumePath,
  watchUntil,
  world,
  completedBackup,
} from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let source: { pv: string; path: string };
const timeoutMs = 10 * 60_000;

before(
  async () => {
    w = await world('containers', ({ app }) => ({ allowedNamespaces: [app] }));
    source = await boundClaim(w.cluster, w.app, 'data', '64Mi');
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

/** Files and folders of three owners, none readable by anyone else, one folder not even by its owner. */
async function privateTree(root: string): Promise<void> {
  await chmod(root, 0o755);
  const entries: [string, 'dir' | 'file', number, number, number][] = [
    ['alice', 'dir', 1001, 1001, 0o700],
    ['alice/notes.txt', 'file', 1001, 1001, 0o600],
    ['alice/inner', 'dir', 1001, 1001, 0o700],
    ['alice/inner/key', 'file', 1001, 100, 0o400],
    ['bob', 'dir', 1002, 1002, 0o750],
    ['bob/db.bin', 'file', 1002, 1002, 0o600],
    ['sealed', 'dir', 1003, 1003, 0o000],
    ['sealed/inside', 'file', 1003, 1003, 0o000],
    ['root-only', 'file', 0, 0, 0o600],
  ];
  // contents first, modes and owners afterwards (children before their folders), so nothing locks the writer out
  for (const [path, type] of entries) {
    if (type === 'dir') await mkdir(join(root, path), { recursive: true });
    else await writeFile(join(root, path), `content of ${path}\n`.repeat(100));
  }
  for (const [path, , uid, gid, mode] of entries.reverse()) {
    await chown(join(root, path), uid, gid);
    await chmod(join(root, path), mode);
  }
}

async function templatePod(step: (typeof stepNames)[number], kind: 'DataUpload' | 'DataDownload'): Promise<Obj> {
  const template = await w.cluster.kube.get(
    `/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs/${templateName(step, kind)}`,
  );
  return structuredClone(template.spec.jobTemplate.spec.template.spec);
}

/** Runs the template's container with `command` in the app namespace (the step's account and volumes left out). */
async function runAsTemplate(name: string, spec: Obj, command: string[]): Promise<{ phase: string; log: string }> {
  const container = spec.containers[0];
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      securityContext: spec.securityContext,
      volumes: [{ name: 'tmp', emptyDir: {} }],
      containers: [
        {
          name: 'step',
          image: container.image,
          command,
          securityContext: container.securityContext,
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        },
      ],
    },
  };
  await w.cluster.kube.create(podsPath(w.app), pod);
  const done = await podFinished(w.cluster.kube, w.app, name, 180_000);
  return { phase: done.status.phase, log: await w.cluster.podLogs(w.app, name) };
}

describe('steps in containers of ferry image', { timeout: 30 * 60_000 }, () => {
  it("a backup's transfer reads files of other owners behind 0600/0700, and a restore writes them back", async () => {
    await privateTree(source.path);
    await completedBackup(w, w.app, 'private');
    await w.cluster.kube.create(
      downloads(w.app),
      dataDownload('back', w.location, {
        targetPVC: { name: 'restored' },
        source: { dataUpload: { name: 'private', namespace: w.app } },
      }),
    );
    const { final } = await watchUntil(
      w.cluster,
      `${downloads(w.app)}/back`,
      ['Completed', 'Failed', 'Canceled'],
      timeoutMs,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    const pvc = await w.cluster.kube.get(`${claims(w.app)}/restored`);
    // owners, groups, modes and contents, the unreadable folder included
    assert.deepEqual(await compareTrees(source.path, await volumePath(w.cluster, pvc.spec.volumeName)), []);
  });

  it("a restore's container without its capabilities cannot write owners or device nodes; with them it can", async () => {
    const spec = await templatePod('transfer', 'DataDownload');
    const script = 'touch /tmp/f && chown 1234:5678 /tmp/f && mknod /tmp/null c 1 3 && echo wrote';
    const granted = await runAsTemplate('restore-caps', spec, ['sh', '-c', script]);
    assert.equal(granted.phase, 'Succeeded', granted.log);
    assert.match(granted.log, /wrote/);
    spec.containers[0].securityContext.capabilities = { drop: ['ALL'] };
    const denied = await runAsTemplate('restore-no-caps', spec, ['sh', '-c', script]);
    assert.equal(denied.phase, 'Failed', denied.log);
    assert.match(denied.log, /Operation not permitted/);
  });

  it('no step can write its root filesystem; each writes only its /tmp', async () => {
    const templates = [
      ...stepNames.filter((s) => s !== 'transfer').map((s) => [s, 'DataUpload'] as const),
      ['transfer', 'DataUpload'] as const,
      ['transfer', 'DataDownload'] as const,
    ];
    for (const [step, kind] of templates) {
      const spec = await templatePod(step, kind);
      const name = `rootfs-${templateName(step, kind).replace('ferry-step-', '')}`;
      const result = await runAsTemplate(name, spec, [
        'sh',
        '-c',
        'echo x > /tmp/ok && echo tmp-ok; echo x > /opt/ferry/planted && echo planted; echo x > /etc/planted && echo planted',
      ]);
      assert.match(result.log, /tmp-ok/, `${name}: ${result.log}`);
      assert.doesNotMatch(result.log, /planted\n/, `${name} wrote its root filesystem: ${result.log}`);
      assert.match(result.log, /Read-only file system/, `${name}: ${result.log}`);
    }
  });
});
