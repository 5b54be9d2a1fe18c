// The step templates and accounts of AppBackup and AppRestore: the dispatcher finds each template by the name it
// derives, the pods meet Pod Security "restricted", and each account holds what its step uses and nothing that
// reads Secrets or touches another step's resources.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { appStepOf, appTemplateName } from '../../../src/shared/app/jobs.ts';

type Obj = Record<string, any>;

const root = join(import.meta.dirname, '..', '..', '..');
const load = (file: string): Obj[] => (yaml.loadAll(readFileSync(join(root, file), 'utf8')) as Obj[]).filter(Boolean);
const policies = ['step-app-backup', 'step-app-restore', 'dispatcher', 'webhook'].flatMap((f) =>
  load(`policies/${f}.yaml`),
);

/** The rules bound to a ServiceAccount of ferry-system: ClusterRoles everywhere, Roles in their namespace. */
function can(sa: string, verb: string, group: string, resource: string, namespace: string): boolean {
  const bound = (b: Obj): boolean =>
    (b.subjects ?? []).some((s: Obj) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === 'ferry-system');
  const rules: Obj[] = [];
  for (const b of policies) {
    if (!bound(b)) continue;
    if (b.kind === 'RoleBinding' && b.metadata.namespace !== namespace) continue;
    if (b.kind !== 'RoleBinding' && b.kind !== 'ClusterRoleBinding') continue;
    const role = policies.find(
      (o) =>
        o.kind === b.roleRef.kind &&
        o.metadata.name === b.roleRef.name &&
        (o.kind === 'ClusterRole' || o.metadata.namespace === namespace),
    );
    rules.push(...(role?.rules ?? []));
  }
  return rules.some(
    (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb) && !r.resourceNames,
  );
}

describe('the AppBackup and AppRestore step templates', () => {
  for (const kind of ['AppBackup', 'AppRestore'] as const) {
    const name = appTemplateName(kind);
    it(`${name}: a suspended template in ferry-system, restricted, under its own account`, () => {
      const [cron] = load(`jobs/${appStepOf[kind]}.yaml`);
      assert.equal(cron.kind, 'CronJob');
      assert.equal(cron.metadata.name, name);
      assert.equal(cron.metadata.namespace, 'ferry-system');
      assert.equal(cron.spec.suspend, true);
      const job = cron.spec.jobTemplate.spec;
      assert.equal(job.backoffLimit, 0, 'the sweep counts one pod per attempt');
      assert.ok(job.ttlSecondsAfterFinished >= 3600, 'failed attempts must outlive the sweep that counts them');
      const pod = job.template.spec;
      assert.equal(pod.serviceAccountName, name);
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
      const [c] = pod.containers;
      assert.equal(c.name, 'step');
      assert.deepEqual(c.command, ['ferry-step']);
      assert.equal(c.args[0], appStepOf[kind]);
      assert.equal(c.securityContext.allowPrivilegeEscalation, false);
      assert.equal(c.securityContext.readOnlyRootFilesystem, true);
      assert.deepEqual(c.securityContext.capabilities, { drop: ['ALL'] });
    });
  }
  it('are listed in the kustomization of jobs/ and policies/', () => {
    const jobs = (yaml.load(readFileSync(join(root, 'jobs', 'kustomization.yaml'), 'utf8')) as Obj).resources;
    const rbac = (yaml.load(readFileSync(join(root, 'policies', 'kustomization.yaml'), 'utf8')) as Obj).resources;
    for (const f of ['app-backup.yaml', 'app-restore.yaml']) assert.ok(jobs.includes(f), f);
    for (const f of ['step-app-backup.yaml', 'step-app-restore.yaml']) assert.ok(rbac.includes(f), f);
  });
});

describe('the AppBackup and AppRestore accounts', () => {
  const b = 'ferry-step-app-backup';
  const r = 'ferry-step-app-restore';

  it('let the app-backup step do what its stages need', () => {
    for (const [verb, group, resource, ns] of [
      ['patch', 'ferry.dev', 'appbackups', 'app'],
      ['update', 'ferry.dev', 'appbackups/status', 'app'],
      ['create', 'ferry.dev', 'datauploads', 'app'],
      ['patch', 'ferry.dev', 'datauploads', 'app'],
      ['get', 'ferry.dev', 'backupstoragelocations', 'ferry-system'],
      ['patch', '', 'persistentvolumeclaims', 'app'],
      ['get', '', 'persistentvolumes', ''],
      ['get', 'storage.k8s.io', 'storageclasses', ''],
      ['create', 'groupsnapshot.storage.k8s.io', 'volumegroupsnapshots', 'app'],
      ['delete', 'groupsnapshot.storage.k8s.io', 'volumegroupsnapshots', 'app'],
      ['list', 'groupsnapshot.storage.k8s.io', 'volumegroupsnapshotclasses', ''],
      ['create', 'snapshot.storage.k8s.io', 'volumesnapshots', 'app'],
      ['delete', 'snapshot.storage.k8s.io', 'volumesnapshots', 'app'],
      ['list', 'snapshot.storage.k8s.io', 'volumesnapshotclasses', ''],
      ['list', '', 'pods', 'app'],
      ['create', '', 'pods/exec', 'app'],
      ['create', 'events.k8s.io', 'events', 'app'],
    ])
      assert.ok(can(b, verb, group, resource, ns), `app-backup cannot ${verb} ${resource} in ${ns}`);
    assert.equal(can(b, 'get', 'ferry.dev', 'backupstoragelocations', 'app'), false, 'locations live in ferry-system');
    assert.equal(can(b, 'delete', 'ferry.dev', 'datauploads', 'app'), false, 'deleting data is not its business');
    assert.equal(can(b, 'update', 'ferry.dev', 'appbackups', 'app'), false, 'the spec is the user’s');
    assert.equal(can(b, 'create', 'batch', 'jobs', 'ferry-system'), false);
    assert.equal(can(b, 'get', 'ferry.dev', 'apprestores', 'app'), false);
  });

  it('let the app-restore step do what it needs and no more', () => {
    for (const [verb, group, resource, ns] of [
      ['get', 'ferry.dev', 'appbackups', 'app'],
      ['get', 'ferry.dev', 'datauploads', 'app'],
      ['get', 'ferry.dev', 'backupstoragelocations', 'ferry-system'],
      ['list', 'ferry.dev', 'backupstoragelocations', 'ferry-system'],
      ['patch', 'ferry.dev', 'apprestores', 'other'],
      ['update', 'ferry.dev', 'apprestores/status', 'other'],
      ['create', 'ferry.dev', 'datadownloads', 'other'],
      ['patch', 'ferry.dev', 'datadownloads', 'other'],
      ['get', '', 'persistentvolumeclaims', 'other'],
      ['create', 'events.k8s.io', 'events', 'other'],
    ])
      assert.ok(can(r, verb, group, resource, ns), `app-restore cannot ${verb} ${resource} in ${ns}`);
    for (const [verb, group, resource] of [
      ['patch', 'ferry.dev', 'appbackups'],
      ['update', 'ferry.dev', 'appbackups/status'],
      ['create', 'ferry.dev', 'datauploads'],
      ['create', '', 'pods/exec'],
      ['create', '', 'persistentvolumeclaims'],
    ])
      assert.equal(can(r, verb, group, resource, 'app'), false, `app-restore may ${verb} ${resource}`);
  });

  it('read no Secrets', () => {
    for (const sa of [b, r])
      for (const ns of ['ferry-system', 'app'])
        for (const verb of ['get', 'list']) assert.equal(can(sa, verb, '', 'secrets', ns), false, `${sa} ${verb}`);
  });

  it('let the dispatcher and the sweep start, give up and expire them', () => {
    for (const sa of ['ferry-dispatcher', 'ferry-sweep']) {
      for (const res of ['appbackups', 'apprestores']) assert.ok(can(sa, 'list', 'ferry.dev', res, 'app'), res);
      for (const res of ['appbackups/status', 'apprestores/status'])
        assert.ok(can(sa, 'update', 'ferry.dev', res, 'app'), res);
      assert.ok(can(sa, 'delete', 'ferry.dev', 'appbackups', 'app'));
      assert.equal(can(sa, 'update', 'ferry.dev', 'appbackups', 'app'), false, 'never a spec');
    }
  });

  it('have the webhook see their creates, updates (spec and status) and deletes', () => {
    const config = policies.find((o) => o.kind === 'ValidatingWebhookConfiguration')!;
    const rules = config.webhooks[0].rules as Obj[];
    const covered = (op: string, res: string): boolean =>
      rules.some((x) => x.operations.includes(op) && x.resources.includes(res));
    for (const res of ['appbackups', 'apprestores']) {
      for (const op of ['CREATE', 'UPDATE', 'DELETE']) assert.ok(covered(op, res), `${op} ${res}`);
      assert.ok(covered('UPDATE', `${res}/status`), `${res}/status`);
    }
  });
});
