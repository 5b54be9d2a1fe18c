// ferry's kustomize subset against kubectl's kustomize (the reference): deploy/ as is, and under an overlay that
// moves it to another namespace and image, must render the same objects.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { deployDir, renderInstall } from '../../../src/shared/install/install.ts';
import { ferryImage, isClusterScoped, parseImage, renderKustomization } from '../../../src/shared/install/kustomize.ts';

const run = promisify(execFile);

async function kubectlKustomize(dir: string): Promise<KubeObject[]> {
  const { stdout } = await run('kubectl', ['kustomize', dir], { maxBuffer: 64 * 1024 * 1024 });
  const objects = (yaml.loadAll(stdout) as KubeObject[]).filter(Boolean);
  // kustomize v5.5 does not know ValidatingAdmissionPolicy(Binding) as cluster-scoped and gives them the overlay's
  // namespace, which the apiserver drops for cluster-scoped kinds: compare what gets stored
  for (const o of objects) if (isClusterScoped(o.kind)) delete o.metadata.namespace;
  return objects;
}

/** Objects keyed by kind, namespace and name: kustomize sorts its output, ferry keeps the resources' order. */
function byKey(objects: KubeObject[]): Map<string, KubeObject> {
  return new Map(objects.map((o) => [`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o]));
}

function assertSameObjects(actual: KubeObject[], expected: KubeObject[]): void {
  assert.equal(actual.length, expected.length);
  const want = byKey(expected);
  for (const [key, obj] of byKey(actual)) assert.deepEqual(obj, want.get(key), key);
}

async function withOverlay<T>(body: string, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-overlay-'));
  try {
    // kustomize takes only relative paths to other folders
    await writeFile(join(dir, 'kustomization.yaml'), `resources:\n  - ${relative(dir, deployDir)}\n${body}`);
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('kustomize subset', () => {
  it('renders deploy/ exactly as kubectl kustomize does', async () => {
    const ours = await renderKustomization(deployDir);
    assert.ok(
      ours.some((o) => o.kind === 'CronJob'),
      'jobs/ is taken in',
    );
    assert.ok(
      ours.some((o) => o.kind === 'ValidatingWebhookConfiguration'),
      'policies/ is taken in',
    );
    assertSameObjects(ours, await kubectlKustomize(deployDir));
  });

  it('moves deploy/ to another namespace and image as an overlay with namespace and images does', async () => {
    const expected = await withOverlay(
      'namespace: backup-ops\nimages:\n  - name: ferry\n    newName: registry.example:5000/ops/ferry\n    newTag: "1.4.2"\n',
      kubectlKustomize,
    );
    const ours = await renderInstall({ namespace: 'backup-ops', image: 'registry.example:5000/ops/ferry:1.4.2' });
    // kustomize leaves an admission policy's parameter behind in ferry-system (an overlay patches it, README); ferry install moves it
    const params = (objs: KubeObject[]) =>
      objs.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding' && (o.spec as any).paramRef?.namespace);
    assert.ok(
      params(ours).length > 0 && params(ours).every((o) => (o.spec as any).paramRef.namespace === 'backup-ops'),
    );
    for (const o of params(expected)) (o.spec as any).paramRef.namespace = 'backup-ops';
    assertSameObjects(ours, expected);
    assert.deepEqual(
      ours.filter((o) => o.metadata.namespace === 'ferry-system').map((o) => o.metadata.name),
      [],
    );
  });

  it('pins a digest as kustomize does', async () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const expected = await withOverlay(
      `images:\n  - name: ferry\n    newName: ghcr.io/o/ferry\n    digest: ${digest}\n`,
      kubectlKustomize,
    );
    assertSameObjects(await renderInstall({ image: `ghcr.io/o/ferry@${digest}` }), expected);
  });

  it('refuses kustomization fields it does not implement, naming them', async () => {
    await withOverlay('commonLabels:\n  team: ops\n', async (dir) => {
      await assert.rejects(renderKustomization(dir), /uses commonLabels, which ferry install does not support/);
    });
  });

  it('splits image references at the tag, not at a registry port', () => {
    assert.deepEqual(parseImage('registry.example:5000/ferry'), {
      name: 'registry.example:5000/ferry',
      digest: undefined,
    });
    assert.deepEqual(parseImage('registry.example:5000/ferry:v1'), {
      name: 'registry.example:5000/ferry',
      tag: 'v1',
      digest: undefined,
    });
    assert.deepEqual(parseImage('ferry@sha256:00'), { name: 'ferry', digest: 'sha256:00' });
    assert.deepEqual(ferryImage('reg/ferry'), {
      name: 'ferry',
      newName: 'reg/ferry',
      newTag: 'latest',
      digest: undefined,
    });
    assert.throws(() => ferryImage(':v1'), /is not an image reference/);
  });
});
