// deploy/monitoring/: the ServiceMonitor scrapes the port the dispatcher serves /metrics on, through the Service
// deploy/ installs, and stays out of the default install (its CRD exists only with prometheus-operator).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

type Obj = Record<string, any>;

const root = join(import.meta.dirname, '..', '..', '..');
const read = (...path: string[]): Obj[] =>
  (yaml.loadAll(readFileSync(join(root, ...path), 'utf8')) as Obj[]).filter(Boolean);

it('the ServiceMonitor selects the dispatcher Service and its metrics port, which serves /metrics', () => {
  const [monitor] = read('deploy', 'monitoring', 'servicemonitor.yaml');
  const dispatcher = read('deploy', 'dispatcher.yaml');
  const service = dispatcher.find((o) => o.kind === 'Service')!;
  const deployment = dispatcher.find((o) => o.kind === 'Deployment')!;
  assert.equal(monitor.kind, 'ServiceMonitor');
  assert.equal(monitor.metadata.namespace, service.metadata.namespace);
  assert.deepEqual(monitor.spec.namespaceSelector.matchNames, [service.metadata.namespace]);
  for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels))
    assert.equal(service.metadata.labels[k], v, `Service label ${k}`);
  const [endpoint] = monitor.spec.endpoints;
  const port = service.spec.ports.find((p: Obj) => p.name === endpoint.port);
  assert.ok(port, `the Service has a port named ${endpoint.port}`);
  const container = deployment.spec.template.spec.containers[0];
  assert.ok(
    container.ports.some((p: Obj) => p.name === port.targetPort),
    'the Service port leads to the container port',
  );
  assert.equal(endpoint.path, '/metrics');
});

it('is not in the default install', () => {
  const [k] = read('deploy', 'kustomization.yaml');
  assert.ok(!k.resources.some((r: string) => r.includes('monitoring')), JSON.stringify(k.resources));
  assert.deepEqual(read('deploy', 'monitoring', 'kustomization.yaml')[0].resources, ['servicemonitor.yaml']);
});
