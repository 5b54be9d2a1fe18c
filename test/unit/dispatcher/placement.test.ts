// Where an exposed volume lets its transfer run, from its claim and PersistentVolume.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { volumePlacement } from '../../../src/dispatcher/placement.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';

const claim = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'c', annotations },
});
const pv = (terms?: unknown[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv' },
  spec: terms ? { nodeAffinity: { required: { nodeSelectorTerms: terms } } } : {},
});
const host = (...values: string[]) => ({
  matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values }],
});

describe('volumePlacement', () => {
  it('follows the node the scheduler selected for the claim', () => {
    assert.deepEqual(volumePlacement(claim({ 'volume.kubernetes.io/selected-node': 'node-2' }), undefined), {
      node: 'node-2',
      pinnable: false,
    });
  });

  it("reads a local volume's node from its affinity", () => {
    assert.deepEqual(volumePlacement(claim(), pv([host('node-1')])), { node: 'node-1', pinnable: false });
  });

  it('leaves zonal and multi-node volumes to the scheduler', () => {
    assert.deepEqual(volumePlacement(claim(), pv([host('node-1', 'node-2')])), { pinnable: false });
    assert.deepEqual(
      volumePlacement(
        claim(),
        pv([{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] }]),
      ),
      { pinnable: false },
    );
  });

  it('lets ferry choose for network volumes and volumes not provisioned yet', () => {
    assert.deepEqual(volumePlacement(claim(), pv()), { pinnable: true });
    assert.deepEqual(volumePlacement(claim(), undefined), { pinnable: true });
    assert.deepEqual(volumePlacement(undefined, undefined), { pinnable: true });
  });
});
