// How `create` tells the apiserver's refusals: a webhook denial of a field a flag set is bad usage naming the
// flag; other denials, a missing namespace and a taken name are failures saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createResource } from '../../src/cli/kube/create.ts';
import { UsageError } from '../../src/cli/run.ts';
import { KubeError } from '../../src/shared/kube/errors.ts';
import type { Kube, KubeObject } from '../../src/shared/kube/kube.ts';

const obj: KubeObject = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'DataDownload',
  metadata: { name: 'copy', namespace: 'app' },
};
const flags = { 'spec.source': '--snapshot', 'spec.source.dataUpload': '--from', 'spec.targetPVC': '--pvc' };

function refusing(err: Error): Kube {
  return {
    create: async () => {
      throw err;
    },
  } as unknown as Kube;
}

const webhook = (reason: string) =>
  new KubeError(
    422,
    'Invalid',
    `POST /apis/ferry.dev/v1alpha1/namespaces/app/datadownloads failed: admission webhook "dispatcher.ferry.dev" denied the request: ${reason}`,
  );

test('a denial of a field a flag set names the flag, the longest matching field first', async () => {
  await assert.rejects(
    createResource(
      refusing(webhook('spec.source.dataUpload: DataUpload "x" does not exist in namespace app')),
      obj,
      flags,
    ),
    (e) => e instanceof UsageError && e.message === '--from: DataUpload "x" does not exist in namespace app',
  );
  await assert.rejects(
    createResource(refusing(webhook('spec.targetPVC.name: must be a DNS name')), obj, flags),
    (e) => e instanceof UsageError && e.message === '--pvc: must be a DNS name',
  );
});

test('other denials, a missing namespace and a taken name fail (exit 1) with one sentence', async () => {
  await assert.rejects(
    createResource(refusing(webhook('spec.sourceNamespace: not allowed')), obj, flags),
    (e) =>
      !(e instanceof UsageError) &&
      e instanceof Error &&
      e.message === 'ferry refused DataDownload app/copy: spec.sourceNamespace: not allowed',
  );
  await assert.rejects(
    createResource(refusing(new KubeError(404, 'NotFound', 'GET  failed: namespaces "app" not found')), obj, flags),
    (e) =>
      e instanceof Error && /^Cannot create DataDownload app\/copy: namespace "app" does not exist/.test(e.message),
  );
  await assert.rejects(
    createResource(refusing(new KubeError(409, 'AlreadyExists', 'exists')), obj, flags),
    (e) => e instanceof Error && e.message === 'Cannot create DataDownload app/copy: one of that name already exists.',
  );
  const plain = new Error('socket hang up');
  await assert.rejects(createResource(refusing(plain), obj, flags), (e) => e === plain);
});
