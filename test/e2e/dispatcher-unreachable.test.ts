// The dispatcher's webhook unreachable on the cluster in a box: creation is refused clearly, and works again once
// it answers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { jobName } from '../../src/shared/step-job/contract.ts';
import { KubeError } from '../support/cluster.ts';
import { freePort } from '../cluster/ports.ts';
import { ferryNamespace, renderDeploy } from '../support/ferry-install.ts';
import { boundClaim, dataUpload, summary, watchUntil, world } from './world.ts';
import { api, app, cluster, du, ferry, uploads, useDispatcher } from './dispatcher-suite.ts';

useDispatcher();

/**
 * ferry's webhook exactly as shipped, but calling a port nobody listens on and only for `namespace`, so suites
 * running beside this one keep their dispatcher. Returns how to take it away again.
 */
async function unreachableWebhook(namespace: string): Promise<() => Promise<void>> {
  const shipped = (await renderDeploy()).find((o) => o.kind === 'ValidatingWebhookConfiguration')!;
  const name = `ferry-unreachable-${namespace}`;
  const unreachable = structuredClone(shipped);
  unreachable.metadata = { name };
  for (const hook of unreachable.webhooks) {
    hook.clientConfig = {
      url: `https://127.0.0.1:${await freePort()}/validate`,
      caBundle: Buffer.from(ferry.ca).toString('base64'),
    };
    hook.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': namespace } };
  }
  await cluster.kube.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', unreachable);
  return async () => {
    await cluster.kube.delete(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`);
  };
}

describe('with the dispatcher unreachable', () => {
  it('creation is refused with a message saying the webhook failed, and works again once it answers', async () => {
    const restore = await unreachableWebhook(app);
    const leftovers: string[] = [];
    try {
      // the apiserver answers 500 for a webhook it cannot call; the message says which. Until the new configuration
      // reaches the apiserver creations pass; the webhook may then take effect between a creation and its deletion,
      // which it refuses the same way (the object is removed once the webhook answers again)
      const deadline = Date.now() + 30_000;
      let error: unknown;
      while (!error && Date.now() < deadline) {
        const attempt = du({});
        error = await cluster.kube.create(uploads(app), attempt).then(
          async () => {
            const refused = await cluster.kube.delete(`${uploads(app)}/${attempt.metadata.name}`).then(
              () => undefined,
              (err: unknown) => err,
            );
            if (refused) leftovers.push(attempt.metadata.name);
            else await new Promise((r) => setTimeout(r, 500));
            return refused;
          },
          (err: unknown) => err,
        );
      }
      assert.ok(error instanceof KubeError, `creation was not refused: ${String(error)}`);
      assert.match(error.message, /failed calling webhook "dispatcher\.ferry\.dev"/);
    } finally {
      await restore();
    }
    const deadline = Date.now() + 30_000;
    for (;;) {
      const created = await cluster.kube.create(uploads(app), du({})).then(
        () => true,
        () => false,
      );
      if (created) break;
      assert.ok(Date.now() < deadline, 'creation still fails once the webhook answers');
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const name of leftovers) await cluster.kube.delete(`${uploads(app)}/${name}`);
  });

  it(
    "a running step's status update retries until the dispatcher answers, and the resource then completes",
    { timeout: 20 * 60_000 },
    async (t) => {
      const w = await world('dispatcher-outage', ({ app: ns }) => ({ allowedNamespaces: [ns] }));
      try {
        const { path } = await boundClaim(w.cluster, w.app, 'data', '64Mi');
        for (let i = 0; i < 4; i++) await writeFile(join(path, `blob-${i}`), randomBytes(8 * 1024 * 1024));
        const created = await w.cluster.kube.create(uploads(w.app), dataUpload('outage', w.location));
        const resource = `${uploads(w.app)}/outage`;
        // the transfer Job exists from Prepared on: from here every status write of the transfer step needs the webhook
        const at = await w.cluster.kube.waitFor(
          resource,
          'the transfer to be dispatched',
          (o) =>
            ['Prepared', 'InProgress', 'Finalizing', 'Completed', 'Failed', 'Canceled'].includes(o.status?.phase)
              ? (o.status.phase as string)
              : undefined,
          10 * 60_000,
        );
        assert.ok(at === 'Prepared' || at === 'InProgress', `the DataUpload was ${at} before the outage began`);
        const transferPods = `/api/v1/namespaces/${ferryNamespace}/pods?labelSelector=${encodeURIComponent(`job-name=${jobName('DataUpload', created.metadata.uid, 'transfer', 1)}`)}`;
        const restore = await unreachableWebhook(w.app);
        const outageMs = 30_000;
        const phases = new Set<string>();
        const pods = new Set<string>();
        try {
          const until = Date.now() + outageMs;
          while (Date.now() < until) {
            phases.add((await w.cluster.kube.get(resource)).status?.phase);
            for (const pod of (await w.cluster.kube.get(transferPods)).items) pods.add(pod.metadata.name);
            await new Promise((r) => setTimeout(r, 500));
          }
        } finally {
          await restore();
        }
        assert.deepEqual(
          [...phases].filter((p) => !['Prepared', 'InProgress'].includes(p)),
          [],
          `the phase moved on while no status update could pass: ${[...phases].join(', ')}`,
        );
        const { final } = await watchUntil(w.cluster, resource, ['Completed', 'Failed', 'Canceled'], 10 * 60_000);
        assert.equal(final.status.phase, 'Completed', final.status.message);
        t.diagnostic(summary(final));
        // one transfer process waited out the outage and finished the step: it logged the retries and then its outcome
        assert.equal(pods.size, 1, `transfer pods during the outage: ${[...pods].join(', ')}`);
        const lines = (await w.cluster.podLogs(ferryNamespace, [...pods][0]!)).split('\n');
        const retried = lines.filter(
          (l) =>
            /could not (update the status of|patch) DataUpload; retrying/.test(l) &&
            l.includes('failed calling webhook'),
        );
        assert.ok(
          retried.length > 0,
          `the transfer logged no status update retried for the webhook:\n${lines.slice(-20).join('\n')}`,
        );
        assert.ok(
          lines.some((l) => l.includes('"outcome":"Advanced"')),
          'the transfer pod that retried did not finish its step',
        );
        t.diagnostic(`${retried.length} status writes retried during the ${outageMs / 1000} s outage`);
      } finally {
        await w.cluster.kube.delete(`${api}/namespaces/${ferryNamespace}/backupstoragelocations/${w.location}`);
        await w.cluster.cleanup();
      }
    },
  );
});
