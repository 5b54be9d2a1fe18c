// `ferry install --velero`: the Velero component lands where each part belongs (ferry's objects in ferry's
// namespace, the Role and its binding in Velero's, subjects pointing back at ferry's ServiceAccounts), the
// webhook listens to Velero's namespace only, and the dispatcher's pod template changes so it restarts with it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderInstall } from '../../../src/shared/install/install.ts';
import { veleroAnnotation } from '../../../src/shared/install/velero.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';

const find = (objects: KubeObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

describe('ferry install --velero', () => {
  it('adds nothing of Velero without the flag', async () => {
    const objects = await renderInstall();
    assert.equal(find(objects, 'ConfigMap', 'ferry-velero'), undefined);
    assert.equal(find(objects, 'ValidatingWebhookConfiguration', 'ferry-velero'), undefined);
    assert.ok(!objects.some((o) => JSON.stringify(o).includes('velero.io')));
  });

  it('fits the component to ferry in ferry-x and Velero in backup-system', async () => {
    const objects = await renderInstall({ namespace: 'ferry-x', veleroNamespace: 'backup-system' });
    const config = find(objects, 'ConfigMap', 'ferry-velero')!;
    assert.equal(config.metadata.namespace, 'ferry-x');
    assert.deepEqual(config.data, { FERRY_VELERO_NAMESPACE: 'backup-system' });
    for (const name of ['ferry-velero', 'ferry-velero-delete']) {
      const role = find(objects, 'Role', name)!;
      const binding = find(objects, 'RoleBinding', name)!;
      assert.equal(role.metadata.namespace, 'backup-system');
      assert.equal(binding.metadata.namespace, 'backup-system');
      for (const s of binding.subjects as { namespace: string }[]) assert.equal(s.namespace, 'ferry-x');
    }
    const clusterBinding = find(objects, 'ClusterRoleBinding', 'ferry-velero')!;
    for (const s of clusterBinding.subjects as { namespace: string }[]) assert.equal(s.namespace, 'ferry-x');
    const webhook = find(objects, 'ValidatingWebhookConfiguration', 'ferry-velero')!;
    const [hook] = webhook.webhooks as Record<string, any>[];
    assert.equal(hook.failurePolicy, 'Ignore', 'ferry being down never blocks Velero');
    assert.deepEqual(hook.namespaceSelector, { matchLabels: { 'kubernetes.io/metadata.name': 'backup-system' } });
    assert.equal(hook.clientConfig.service.namespace, 'ferry-x');
    assert.equal(webhook.metadata.annotations?.['cert-manager.io/inject-ca-from'], 'ferry-x/ferry-dispatcher');
    const dispatcher = find(objects, 'Deployment', 'ferry-dispatcher')!;
    assert.equal((dispatcher.spec as any).template.metadata.annotations[veleroAnnotation], 'backup-system');
    // the ferry-dispatcher webhook and Role stay as they were
    assert.equal(find(objects, 'Role', 'ferry-dispatcher')!.metadata.namespace, 'ferry-x');
  });

  it("grants Velero's objects no more than reading, and writing status by patch", async () => {
    const objects = await renderInstall({ veleroNamespace: 'velero' });
    const rules = (find(objects, 'Role', 'ferry-velero')!.rules as { resources: string[]; verbs: string[] }[]).flatMap(
      (r) => r.resources.map((res) => `${res}:${[...r.verbs].sort().join(',')}`),
    );
    assert.deepEqual(rules.sort(), [
      'backups:get,list',
      'backupstoragelocations:get,list',
      'datadownloads:get,list,patch,watch',
      'datauploads:get,list,patch,watch',
    ]);
    const text = JSON.stringify(objects.filter((o) => o.metadata.name?.startsWith('ferry-velero')));
    assert.ok(!/secrets/.test(text), "Velero's Secrets are never readable");
  });
});
