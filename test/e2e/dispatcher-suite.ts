// What the dispatcher's e2e files share: ferry installed from deploy/ on the cluster in a box, a location allowing the
// app namespace (restores to other), a bound PVC "data" and a pending one, and helpers to build and submit resources.
// The bindings are live: they hold the suite's values once useDispatcher()'s before hook ran.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { labels } from '../../src/shared/step-job/contract.ts';
import { KubeError, useCluster } from '../support/cluster.ts';
import type { TestCluster } from '../support/cluster.ts';
import { apiserverClientCertificate, ferryNamespace, installFerry } from '../support/ferry-install.ts';
import type { FerryInstall } from '../support/ferry-install.ts';
import { postReview } from '../support/webhook-call.ts';

const run = promisify(execFile);
export type Obj = Record<string, any>;

export const api = '/apis/ferry.dev/v1alpha1';
export const uploads = (ns: string): string => `${api}/namespaces/${ns}/datauploads`;
export const downloads = (ns: string): string => `${api}/namespaces/${ns}/datadownloads`;
export const jobsPath = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs`;

export let cluster: TestCluster;
export let ferry: FerryInstall;
/** the client certificate the apiserver presents: the dispatcher serves no caller without it */
export let apiserver: { cert: string; key: string };
export let app: string;
export let other: string;
export let loc: string;
export const suffix = randomBytes(3).toString('hex');

export async function refusal(path: string, obj: Obj, method: 'POST' | 'PUT' = 'POST'): Promise<string> {
  try {
    await cluster.kube.request(method, path, obj);
  } catch (err) {
    if (err instanceof KubeError && err.status >= 400 && err.status < 500) return err.message;
    throw err;
  }
  assert.fail(`${method} ${path} was accepted: ${JSON.stringify(obj).slice(0, 300)}`);
}

export function du(spec: Obj, name = `du-${randomBytes(3).toString('hex')}`): Obj {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name },
    spec: { sourcePVC: 'data', backupStorageLocation: loc, ...spec },
  };
}

export function dd(spec: Obj, name = `dd-${randomBytes(3).toString('hex')}`): Obj {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataDownload',
    metadata: { name },
    spec: {
      targetPVC: { name: 'restored' },
      backupStorageLocation: loc,
      source: { snapshotID: 'abcdef0123456789' },
      ...spec,
    },
  };
}

/** POSTs an AdmissionReview to the installed dispatcher itself, as the apiserver would (with its client certificate). */
export function review(request: Obj | undefined): Promise<{ status: number; body: string }> {
  return postReview(
    ferry,
    request ? { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request } : { hello: 'world' },
    apiserver,
  );
}

export async function jobsOf(uid: string): Promise<Obj[]> {
  return (await cluster.kube.get(`${jobsPath}?labelSelector=${encodeURIComponent(`${labels.uid}=${uid}`)}`)).items;
}

export async function kubectl(...args: string[]): Promise<string> {
  return (await run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args])).stdout;
}

/** installs ferry once for the file that calls it, with a location and two PVCs in the app namespace */
export function useDispatcher(): void {
  before(async () => {
    cluster = await useCluster('dispatcher');
    ferry = await installFerry(cluster);
    apiserver = await apiserverClientCertificate();
    app = await cluster.namespace('app');
    other = await cluster.namespace('other');
    loc = `loc-${suffix}`;
    await cluster.kube.create(`${api}/namespaces/${ferryNamespace}/backupstoragelocations`, {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name: loc },
      spec: {
        s3: { endpoint: cluster.s3.endpoint, bucket: cluster.s3.bucket, prefix: `e2e-${suffix}` },
        credential: { name: `s3-${suffix}` },
        repositoryPassword: { name: `repo-${suffix}`, key: 'password' },
        allowedNamespaces: [app],
        crossNamespaceRestores: [{ from: app, to: [other] }],
      },
    });
    await cluster.kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `repo-${suffix}` },
      stringData: { password: 'e2e' },
    });
    const claim = (name: string, storageClassName: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '16Mi' } } },
    });
    await cluster.kube.create(
      `/api/v1/namespaces/${app}/persistentvolumeclaims`,
      claim('data', 'ferry-local-immediate'),
    );
    await cluster.kube.create(`/api/v1/namespaces/${app}/persistentvolumeclaims`, claim('pending', 'ferry-local'));
    await cluster.kube.waitFor(
      `/api/v1/namespaces/${app}/persistentvolumeclaims/data`,
      'the data PVC to bind',
      (pvc) => (pvc.status?.phase === 'Bound' ? true : undefined),
    );
  });

  after(async () => {
    await cluster?.kube.delete(`${api}/namespaces/${ferryNamespace}/backupstoragelocations/${loc}`);
    await cluster?.kube.delete(`/api/v1/namespaces/${ferryNamespace}/secrets/repo-${suffix}`);
    await cluster?.cleanup();
  });
}
