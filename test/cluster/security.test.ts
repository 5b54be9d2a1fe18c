// The box's control plane enforces what a real one does: RBAC, ServiceAccount tokens (TokenRequest and the pod's
// projected token), admission webhooks on 127.0.0.1 with their own CA, and ValidatingAdmissionPolicy.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { KubeError, useCluster } from '../support/cluster.ts';
import type { TestCluster } from '../support/cluster.ts';
import { ensureBinaries } from './build.ts';
import type { KubeObject } from './kube.ts';
import { ferryImage, grantServiceAccount, podFinished, podObject, podsPath, serviceAccountToken } from './testing.ts';

let cluster: TestCluster;
let ns: string;

before(async () => {
  cluster = await useCluster('security');
  ns = await cluster.namespace();
  await grantServiceAccount(cluster.kube, ns, 'reader', [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
  ]);
});
after(() => cluster.cleanup());

describe('service accounts and RBAC', () => {
  it('denies a ServiceAccount what its Role does not grant', async () => {
    const asReader = cluster.kube.withToken(await serviceAccountToken(cluster.kube, ns, 'reader'));
    try {
      const list = await asReader.get(`/api/v1/namespaces/${ns}/configmaps`);
      assert.ok(Array.isArray(list.items));
      await assert.rejects(
        asReader.get(`/api/v1/namespaces/${ns}/secrets`),
        (err: unknown) => err instanceof KubeError && err.status === 403,
      );
      await assert.rejects(
        asReader.get('/api/v1/namespaces/default/configmaps'),
        (err: unknown) => err instanceof KubeError && err.status === 403,
      );
    } finally {
      asReader.close();
    }
  });

  it("authenticates a pod's projected token as the pod's ServiceAccount, through the in-cluster environment", async () => {
    // what an in-cluster client does: KUBERNETES_SERVICE_HOST/PORT, the mounted token and CA
    const script = `
      const fs = require('node:fs'); const https = require('node:https');
      const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
      const call = (method, path, body) => new Promise((resolve, reject) => {
        const req = https.request({ host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT,
          method, path, ca: fs.readFileSync(dir + '/ca.crt'),
          headers: { Authorization: 'Bearer ' + fs.readFileSync(dir + '/token', 'utf8'), 'Content-Type': 'application/json' } },
          (res) => { let d = ''; res.on('data', (c) => d += c); res.on('end', () => resolve([res.statusCode, d])); });
        req.on('error', reject); req.end(body);
      });
      (async () => {
        const [, review] = await call('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
        console.log('user=' + JSON.parse(review).status.userInfo.username);
        console.log('configmaps=' + (await call('GET', '/api/v1/namespaces/${ns}/configmaps'))[0]);
        console.log('secrets=' + (await call('GET', '/api/v1/namespaces/${ns}/secrets'))[0]);
      })();`;
    await cluster.kube.create(
      podsPath(ns),
      podObject('whoami', {
        serviceAccountName: 'reader',
        containers: [{ name: 'main', image: ferryImage, command: ['node', '-e', script] }],
      }),
    );
    const pod = await podFinished(cluster.kube, ns, 'whoami');
    const logs = await cluster.podLogs(ns, 'whoami');
    assert.equal(pod.status.phase, 'Succeeded', logs);
    assert.equal(logs, `user=system:serviceaccount:${ns}:reader\nconfigmaps=200\nsecrets=403\n`);
  });
});

describe('admission', () => {
  let server: Server;
  let pki: string;
  const calls: KubeObject[] = [];
  const group = (): string => `${ns}.ferrybox.test`;

  before(async () => {
    // a serving certificate from a CA of its own, not the cluster's
    pki = await mkdtemp(join(tmpdir(), 'ferrybox-webhook-'));
    await promisify(execFile)((await ensureBinaries()).ferrybox, [
      'pki',
      `--dir=${pki}`,
      '--server=https://127.0.0.1:1',
    ]);
    server = createServer(
      { cert: await readFile(join(pki, 'apiserver.crt')), key: await readFile(join(pki, 'apiserver.key')) },
      (req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => {
          body += c.toString();
        });
        req.on('end', () => {
          const review = JSON.parse(body) as KubeObject;
          const path = new URL(req.url ?? '/', 'https://127.0.0.1').pathname; // the apiserver adds ?timeout=5s
          calls.push({ path, review });
          const obj = review.request.object;
          const response: KubeObject = { uid: review.request.uid, allowed: true };
          if (path === '/validate' && obj.spec?.size > 10) {
            Object.assign(response, {
              allowed: false,
              status: { code: 403, message: `size ${obj.spec.size} is more than 10` },
            });
          }
          if (path === '/mutate') {
            const patch = [{ op: 'add', path: '/metadata/labels', value: { ...obj.metadata.labels, mutated: 'yes' } }];
            Object.assign(response, {
              patchType: 'JSONPatch',
              patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
            });
          }
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    const { kube } = cluster;
    await kube.delete(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${ns}`);
    await kube.delete(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${ns}`);
    await kube.delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group()}`);
    server.close();
    await rm(pki, { recursive: true, force: true });
  });

  it('calls webhooks served on 127.0.0.1 with their own CA for a custom resource', async () => {
    const { kube } = cluster;
    await kube.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group()}` },
      spec: {
        group: group(),
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    });
    await kube.waitFor(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group()}`,
      'the CRD to be established',
      (crd) =>
        (crd.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True')
          ? true
          : undefined,
    );
    const port = (server.address() as { port: number }).port;
    const caBundle = (await readFile(join(pki, 'ca.crt'))).toString('base64');
    const webhook = (path: string): KubeObject => ({
      name: `${path}.${group()}`,
      clientConfig: { url: `https://127.0.0.1:${port}/${path}`, caBundle },
      rules: [{ apiGroups: [group()], apiVersions: ['v1'], resources: ['widgets'], operations: ['CREATE'] }],
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
    });
    await kube.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: ns },
      webhooks: [webhook('validate')],
    });
    await kube.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: ns },
      webhooks: [webhook('mutate')],
    });
    const widgets = `/apis/${group()}/v1/namespaces/${ns}/widgets`;
    const widget = (name: string, size: number): KubeObject => ({
      apiVersion: `${group()}/v1`,
      kind: 'Widget',
      metadata: { name },
      spec: { size },
    });
    // webhook configurations reach the apiserver's admission chain within a moment
    const created = await retryUntil(
      () => kube.create(widgets, widget(`small-${Date.now()}`, 3)),
      (w) => w.metadata.labels?.mutated === 'yes',
    );
    assert.equal(created.metadata.labels.mutated, 'yes');
    await assert.rejects(
      kube.create(widgets, widget('big', 50)),
      (err: unknown) => err instanceof KubeError && err.status === 403 && /size 50 is more than 10/.test(err.message),
    );
    assert.ok(calls.some((c) => c.path === '/validate' && c.review.request.name === created.metadata.name));
    assert.ok(calls.some((c) => c.path === '/mutate' && c.review.request.kind.kind === 'Widget'));
  });

  it('enforces a ValidatingAdmissionPolicy', async () => {
    const { kube } = cluster;
    const base = '/apis/admissionregistration.k8s.io/v1';
    await kube.create(`${base}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: ns },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }],
        },
        validations: [
          {
            expression: "!has(object.data) || !('forbidden' in object.data)",
            message: 'the key forbidden is not allowed',
          },
        ],
      },
    });
    await kube.create(`${base}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: ns },
      spec: {
        policyName: ns,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      },
    });
    try {
      const configmap = (name: string, data: Record<string, string>): KubeObject => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
        data,
      });
      const denial = await retryUntil(
        () =>
          kube.create(`/api/v1/namespaces/${ns}/configmaps`, configmap(`probe-${Date.now()}`, { forbidden: 'x' })).then(
            () => undefined,
            (e: unknown) => e,
          ),
        (e) => e instanceof KubeError,
      );
      assert.ok(denial instanceof KubeError && /the key forbidden is not allowed/.test(denial.message), String(denial));
      await kube.create(`/api/v1/namespaces/${ns}/configmaps`, configmap('fine', { allowed: 'x' }));
    } finally {
      await kube.delete(`${base}/validatingadmissionpolicybindings/${ns}`);
      await kube.delete(`${base}/validatingadmissionpolicies/${ns}`);
    }
  });
});

/** Calls fn until ok(result) holds (policies and webhooks take effect within seconds), returning that result. */
async function retryUntil<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
}
