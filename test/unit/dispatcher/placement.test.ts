// Where an exposed volume lets its transfer run, from its claim, its PersistentVolume and the cluster's nodes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { volumePlacement } from '../../../src/dispatcher/placement.ts';
import type { ClusterNode } from '../../../src/dispatcher/nodes.ts';
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
const term = (...matchExpressions: { key: string; operator: string; values?: string[] }[]) => ({ matchExpressions });
const host = (...values: string[]) => term({ key: 'kubernetes.io/hostname', operator: 'In', values });
const csiTopology = 'topology.local.csi.ferry.dev/node';
const node = (name: string, zone: string, usable = true, extra: Record<string, string> = {}): ClusterNode => ({
  name,
  labels: { 'kubernetes.io/hostname': name, [csiTopology]: name, 'topology.kubernetes.io/zone': zone, ...extra },
  usable,
});
const nodes = [node('node-1', 'a', true, { disk: 'ssd', cores: '8' }), node('node-2', 'a'), node('node-3', 'b', false)];

describe('volumePlacement', () => {
  it('follows the node the scheduler selected for the claim', () => {
    assert.deepEqual(volumePlacement(claim({ 'volume.kubernetes.io/selected-node': 'node-2' }), undefined, nodes), {
      node: 'node-2',
      pinnable: false,
    });
  });

  it("reads a local volume's node from its affinity by host name", () => {
    assert.deepEqual(volumePlacement(claim(), pv([host('node-1')]), nodes), { node: 'node-1', pinnable: false });
  });

  it("reads a local volume's node from a CSI driver's own topology key, as the nodes' labels answer it", () => {
    const tied = pv([term({ key: csiTopology, operator: 'In', values: ['node-2'] })]);
    assert.deepEqual(volumePlacement(claim(), tied, nodes), { node: 'node-2', pinnable: false });
    // a cordoned node still holds its volumes
    const cordoned = pv([term({ key: csiTopology, operator: 'In', values: ['node-3'] })]);
    assert.deepEqual(volumePlacement(claim(), cordoned, nodes), { node: 'node-3', pinnable: false });
  });

  it('reads every operator and matchFields as the scheduler does; terms are alternatives', () => {
    const cases: [unknown[], string | undefined][] = [
      [[term({ key: 'disk', operator: 'Exists' })], 'node-1'],
      [[term({ key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: ['a'] })], 'node-3'],
      [[term({ key: 'cores', operator: 'Gt', values: ['4'] })], 'node-1'],
      [[term({ key: 'cores', operator: 'Lt', values: ['4'] })], undefined],
      [[{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }] }], 'node-2'],
      [
        [
          term(
            { key: 'disk', operator: 'DoesNotExist' },
            { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] },
          ),
        ],
        'node-2',
      ],
      [[host('node-1'), host('node-2')], undefined],
      [[{}], undefined],
    ];
    for (const [terms, expected] of cases)
      assert.deepEqual(
        volumePlacement(claim(), pv(terms), nodes),
        expected ? { node: expected, pinnable: false } : { pinnable: false },
        JSON.stringify(terms),
      );
  });

  it('leaves zonal and multi-node volumes to the scheduler', () => {
    assert.deepEqual(volumePlacement(claim(), pv([host('node-1', 'node-2')]), nodes), { pinnable: false });
    assert.deepEqual(
      volumePlacement(
        claim(),
        pv([term({ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] })]),
        nodes,
      ),
      { pinnable: false },
    );
  });

  it('lets ferry choose for network volumes and volumes not provisioned yet', () => {
    assert.deepEqual(volumePlacement(claim(), pv(), nodes), { pinnable: true });
    assert.deepEqual(volumePlacement(claim(), undefined, nodes), { pinnable: true });
    assert.deepEqual(volumePlacement(undefined, undefined, nodes), { pinnable: true });
  });
});
