// The copy step's template and account: the dispatcher finds the template by the name it uses, the pod meets Pod
// Security "restricted" with one attempt per Job, and the account holds what the step uses (its DataCopy, the
// DataUpload's status, both locations, Events) and nothing that reads Secrets, changes a backup or deletes anything.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { copyTemplateName } from '../../../src/shared/copy/step.ts';

type Obj = Record<string, any>;

const root = join(import.meta.dirname, '..', '..', '..');
const load = (file: string): Obj[] => (yaml.loadAll(readFileSync(join(root, file), 'utf8')) as Obj[]).filter(Boolean);
const policy = load('policies/step-copy.yaml');

/** Whether the copy account may `verb` `resource`: its ClusterRole anywhere, its Role in ferry-system only. */
function can(verb: string, group: string, resource: string, namespace: string): boolean {
  return policy
    .filter((o) => o.kind === 'ClusterRole' || (o.kind === 'Role' && o.metadata.namespace === namespace))
    .flatMap((o) => o.rules as Obj[])
    .some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
}

describe('the copy step template and account', () => {
  it('is the template the dispatcher reads, restricted, one pod per attempt, bounded', () => {
    const [cron] = load('jobs/copy.yaml');
    assert.equal(cron.metadata.name, copyTemplateName);
    assert.equal(cron.spec.suspend, true);
    const job = cron.spec.jobTemplate.spec;
    assert.equal(job.backoffLimit, 0);
    assert.ok(job.activeDeadlineSeconds > 0 && job.ttlSecondsAfterFinished > 0);
    const pod = job.template.spec;
    assert.equal(pod.serviceAccountName, copyTemplateName);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
    const [step] = pod.containers;
    assert.deepEqual(step.args, ['copy', '<namespace>/<name>']);
    assert.equal(step.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(step.securityContext.capabilities, { drop: ['ALL'] });
    assert.ok(!pod.volumes.some((v: Obj) => v.persistentVolumeClaim || v.hostPath), 'it needs no volume');
  });

  it('lets the step do its work and nothing more', () => {
    for (const [verb, group, resource, ns] of [
      ['get', 'ferry.dev', 'datacopies', 'app'],
      ['patch', 'ferry.dev', 'datacopies', 'app'],
      ['update', 'ferry.dev', 'datacopies/status', 'app'],
      ['get', 'ferry.dev', 'datauploads', 'app'],
      ['patch', 'ferry.dev', 'datauploads/status', 'app'],
      ['get', 'ferry.dev', 'backupstoragelocations', 'ferry-system'],
      ['list', '', 'pods', 'ferry-system'],
      ['create', 'events.k8s.io', 'events', 'app'],
    ])
      assert.ok(can(verb, group, resource, ns), `copy cannot ${verb} ${resource} in ${ns}`);
    for (const [verb, group, resource, ns] of [
      ['get', '', 'secrets', 'ferry-system'],
      ['list', '', 'secrets', 'ferry-system'],
      ['patch', 'ferry.dev', 'datauploads', 'app'],
      ['update', 'ferry.dev', 'datauploads/status', 'app'],
      ['delete', 'ferry.dev', 'datauploads', 'app'],
      ['delete', 'ferry.dev', 'datacopies', 'app'],
      ['get', 'ferry.dev', 'backupstoragelocations', 'app'],
    ])
      assert.equal(can(verb, group, resource, ns), false, `copy may ${verb} ${resource} in ${ns}`);
  });

  it('is listed in the kustomizations of jobs/ and policies/', () => {
    const list = (dir: string) =>
      (yaml.load(readFileSync(join(root, dir, 'kustomization.yaml'), 'utf8')) as Obj).resources;
    assert.ok(list('jobs').includes('copy.yaml'));
    assert.ok(list('policies').includes('step-copy.yaml'));
  });
});
