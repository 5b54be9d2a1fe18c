// Small builders and waits shared by the box's own tests.

import { join } from 'node:path';
import { sleep } from '../../src/engine/concurrency/sleep.ts';
import type { Kube, KubeObject } from './kube.ts';
import { statePaths } from './paths.ts';

export const busybox = 'busybox:1.36';
export const ferryImage = 'ferry:dev';

export function shellContainer(name: string, script: string, extra: KubeObject = {}): KubeObject {
  return { name, image: busybox, command: ['sh', '-c', script], ...extra };
}

export function podObject(name: string, spec: KubeObject, metadata: KubeObject = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata }, spec: { restartPolicy: 'Never', ...spec } };
}

export function claimObject(name: string, spec: KubeObject = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } }, ...spec },
  };
}

export function jobObject(name: string, podSpec: KubeObject, spec: KubeObject = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', ...podSpec } }, ...spec },
  };
}

export const podsPath = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
export const claimsPath = (ns: string): string => `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
export const jobsPath = (ns: string): string => `/apis/batch/v1/namespaces/${ns}/jobs`;
export const snapshotsPath = (ns: string): string =>
  `/apis/snapshot.storage.k8s.io/v1/namespaces/${ns}/volumesnapshots`;
export const contentsPath = '/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents';

/** A ServiceAccount allowed exactly `rules` in its namespace: a Role and a RoleBinding named after it. */
export async function grantServiceAccount(kube: Kube, ns: string, name: string, rules: KubeObject[]): Promise<void> {
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
  await kube.create(`/api/v1/namespaces/${ns}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name },
  });
  await kube.create(`${rbac}/roles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name },
    rules,
  });
  await kube.create(`${rbac}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
  });
}

/** A short-lived token of the ServiceAccount (TokenRequest), to act as it. */
export async function serviceAccountToken(kube: Kube, ns: string, name: string): Promise<string> {
  const res = await kube.create(`/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 600 },
  });
  return res.status.token;
}

/** Waits for the pod to reach a terminal phase and returns it. */
export function podFinished(kube: Kube, ns: string, name: string, timeoutMs = 90_000): Promise<KubeObject> {
  return kube.waitFor(
    `${podsPath(ns)}/${name}`,
    `pod ${ns}/${name} to finish`,
    (pod) => (['Succeeded', 'Failed'].includes(pod.status?.phase) ? pod : undefined),
    timeoutMs,
  );
}

export function jobCondition(
  kube: Kube,
  ns: string,
  name: string,
  type: string,
  timeoutMs = 120_000,
): Promise<KubeObject> {
  return kube.waitFor(
    `${jobsPath(ns)}/${name}`,
    `job ${ns}/${name} to be ${type}`,
    (job) => (job.status?.conditions ?? []).find((c: KubeObject) => c.type === type && c.status === 'True'),
    timeoutMs,
  );
}

export function snapshotReady(kube: Kube, ns: string, name: string, timeoutMs = 60_000): Promise<KubeObject> {
  return kube.waitFor(
    `${snapshotsPath(ns)}/${name}`,
    `snapshot ${ns}/${name} to be readyToUse`,
    (vs) => (vs.status?.readyToUse === true ? vs : undefined),
    timeoutMs,
  );
}

/** The terminated state of a pod's (first) container. */
export function terminated(pod: KubeObject, container?: string): KubeObject {
  const statuses: KubeObject[] = pod.status?.containerStatuses ?? [];
  const status = container ? statuses.find((s) => s.name === container) : statuses[0];
  return status?.state?.terminated ?? {};
}

/** Where the box's CSI driver keeps a PersistentVolume's data on this machine: a directory, or an image file for a
 * block volume (internal/layout). Tests write seed data there and compare restores with it. */
export function volumeFile(pv: KubeObject, storage = statePaths().storage): string {
  const handle: string = pv.spec.csi.volumeHandle;
  return join(storage, 'volumes', pv.spec.volumeMode === 'Block' ? `${handle}.img` : handle);
}

/** Polls until `check` gives a value, or fails naming what it waited for. */
export async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Waited ${timeoutMs / 1000} s for ${what} in vain.`);
    await sleep(500);
  }
}
