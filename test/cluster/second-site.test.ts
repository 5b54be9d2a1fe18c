// The box's second site is another cluster: its own API, node, storage and MinIO, reachable from its pods as in any
// cluster, and usable while the first site is gone.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useCluster, useSecondSite } from '../support/cluster.ts';
import type { SecondSiteCluster, TestCluster } from '../support/cluster.ts';
import type { KubeObject } from './kube.ts';
import { claimObject, claimsPath, ferryImage, podFinished, podObject, podsPath } from './testing.ts';

let first: TestCluster;
let second: SecondSiteCluster;
const ns = `second-site-${process.pid}`;

before(async () => {
  first = await useCluster('second-site');
  second = await useSecondSite();
  await second.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await second.kube.waitFor(
    `/api/v1/namespaces/${ns}/serviceaccounts/default`,
    'the default ServiceAccount',
    () => true,
  );
});
after(async () => {
  await second?.kube.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  second?.close();
  await first?.cleanup();
});

const nodeNames = async (kube: TestCluster['kube']): Promise<string[]> =>
  ((await kube.get('/api/v1/nodes')).items as { metadata: { name: string } }[]).map((n) => n.metadata.name).sort();

// a pod's view of its site: the apiserver through the kubernetes Service (verified with the ServiceAccount's CA),
// its MinIO, and a volume of the site's storage
const probe = `
const base = 'https://' + process.env.KUBERNETES_SERVICE_HOST + ':' + process.env.KUBERNETES_SERVICE_PORT;
const token = require('fs').readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8');
const main = async () => {
  const version = await fetch(base + '/version', { headers: { authorization: 'Bearer ' + token }, signal: AbortSignal.timeout(30000) });
  console.log('service=' + process.env.KUBERNETES_SERVICE_HOST + ' version=' + version.status);
  const s3 = await fetch(process.env.S3 + '/minio/health/ready', { signal: AbortSignal.timeout(30000) });
  console.log('s3=' + s3.status);
  require('fs').writeFileSync('/data/written', 'second site');
  console.log('volume=' + require('fs').readFileSync('/data/written', 'utf8'));
};
main().catch((e) => { console.error(e); process.exit(1); });
`;

/** The probe pod's state, the namespace's events and its claim's: what a timeout alone would not say. */
async function whyNotFinished(): Promise<string> {
  const pod = await second.kube.find(`${podsPath(ns)}/probe`);
  const events = ((await second.kube.get(`/api/v1/namespaces/${ns}/events`)).items as KubeObject[]).map(
    (e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason}: ${e.message}`,
  );
  const logs = await second.podLogs(ns, 'probe').catch(() => '');
  return `pod: ${JSON.stringify(pod?.status ?? 'gone')}; events: ${events.join(' | ')}; logs: ${logs}`;
}

describe('second site', () => {
  it('is another cluster with its own node', async () => {
    assert.deepEqual(await nodeNames(second.kube), second.nodes);
    const firstNodes = await nodeNames(first.kube);
    for (const node of second.nodes) assert.ok(!firstNodes.includes(node), `${node} is not a node of the first site`);
    assert.notEqual(second.s3.endpoint, first.s3.endpoint);
    assert.notEqual(second.s3.accessKey, first.s3.accessKey);
  });

  it("runs pods that reach their own apiserver, MinIO and storage, with the first site's API and MinIO gone", async () => {
    await second.kube.create(claimsPath(ns), claimObject('data'));
    const pod = podObject('probe', {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'main',
          image: ferryImage,
          command: ['node', '-e', probe],
          env: [
            { name: 'S3', value: second.s3.endpoint },
            { name: 'NODE_EXTRA_CA_CERTS', value: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt' },
          ],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      securityContext: { runAsUser: 1000, fsGroup: 1000 },
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    });
    const finished = await second.withFirstSiteGone(async () => {
      await second.kube.create(podsPath(ns), pod);
      return podFinished(second.kube, ns, 'probe', 180_000).catch(async (err: Error) => {
        throw new Error(`${err.message} ${await whyNotFinished()}`);
      });
    });
    const logs = await second.podLogs(ns, 'probe');
    assert.equal(finished.status.phase, 'Succeeded', logs);
    assert.equal(finished.spec.nodeName, second.nodes[0]);
    const service = await second.kube.get('/api/v1/namespaces/default/services/kubernetes');
    assert.match(logs, new RegExp(`service=${service.spec.clusterIP.replaceAll('.', '\\.')} version=200\n`));
    assert.match(logs, /s3=200\nvolume=second site\n/);
    // the first site came back as it was
    assert.ok((await nodeNames(first.kube)).length > 0);
  });
});
