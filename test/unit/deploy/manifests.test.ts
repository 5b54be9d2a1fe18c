// The manifests in jobs/, policies/ and deploy/: step templates follow the contract the dispatcher relies on, each
// ServiceAccount holds only what its step needs (no step reads Secrets), and the webhook, the
// Deployment and the kustomizations fit together.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { settings } from '../../../src/dispatcher/config.ts';
import { stepNames as steps } from '../../../src/shared/api/types.ts';

type Obj = Record<string, any>;

const root = join(import.meta.dirname, '..', '..', '..');

function load(dir: string): Obj[] {
  return readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((f) => yaml.loadAll(readFileSync(join(root, dir, f), 'utf8')) as Obj[])
    .filter(Boolean);
}

const jobs = load('jobs');
const policies = load('policies');
const deploy = load('deploy');
const find = (objs: Obj[], kind: string, name: string): Obj => {
  const found = objs.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `no ${kind} ${name}`);
  return found;
};

// Pod Security "baseline" allows adding only these capabilities
const baselineCapabilities = [
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
];

// a backup's and a restore's transfer have a template each
const stepTemplates = steps.flatMap((step) =>
  (step === 'transfer' ? ['transfer-backup', 'transfer-restore'] : [step]).map((t) => ({
    step,
    name: `ferry-step-${t}`,
  })),
);

describe('jobs/', () => {
  for (const { step, name } of stepTemplates) {
    it(`holds the ${name} template the dispatcher expects`, () => {
      const cron = find(jobs, 'CronJob', name);
      assert.equal(cron.metadata.namespace, 'ferry-system');
      assert.equal(cron.spec.suspend, true);
      const job = cron.spec.jobTemplate.spec;
      for (const field of ['backoffLimit', 'activeDeadlineSeconds', 'ttlSecondsAfterFinished'])
        assert.equal(typeof job[field], 'number', field);
      const pod = job.template.spec;
      assert.equal(pod.serviceAccountName, `ferry-step-${step}`);
      assert.equal(pod.restartPolicy, 'Never');
      assert.equal(pod.priorityClassName, 'ferry-steps');
      assert.equal(pod.containers.length, 1);
      const [c] = pod.containers;
      assert.equal(c.name, 'step');
      assert.equal(c.image, 'ferry:dev');
      assert.deepEqual(c.command, ['ferry-step']);
      assert.deepEqual(c.args, [step, '--sweep']);
      assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory, 'resources');
      assert.equal(c.securityContext.allowPrivilegeEscalation, false);
      assert.equal(c.securityContext.privileged, undefined);
      assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
      assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
      const added: string[] = c.securityContext.capabilities.add ?? [];
      if (name === 'ferry-step-transfer-backup') {
        // it only reads: nothing that writes owners, modes, setuid bits, file capabilities or device nodes
        assert.deepEqual(added, ['DAC_OVERRIDE'], "a backup's transfer holds one capability, to read every file");
        assert.equal(pod.securityContext.runAsUser, 0);
      } else if (step === 'transfer') {
        assert.ok(
          added.every((cap) => baselineCapabilities.includes(cap)),
          `transfer adds ${added} beyond baseline`,
        );
      } else {
        assert.equal(pod.securityContext.runAsNonRoot, true, `${step} must meet restricted`);
        assert.deepEqual(added, [], `${step} must meet restricted`);
      }
    });
  }

  it('has the maintenance template and the reconcile CronJob, under their own accounts, meeting restricted', () => {
    const template = find(jobs, 'CronJob', 'ferry-step-maintenance');
    assert.equal(template.spec.suspend, true);
    const reconcile = find(jobs, 'CronJob', 'ferry-maintenance-reconcile');
    assert.notEqual(reconcile.spec.suspend, true);
    assert.equal(reconcile.spec.concurrencyPolicy, 'Forbid');
    for (const [cron, sa, args] of [
      [template, 'ferry-step-maintenance', ['maintenance']],
      [reconcile, 'ferry-maintenance-reconcile', ['maintenance', '--reconcile']],
    ] as const) {
      const pod = cron.spec.jobTemplate.spec.template.spec;
      assert.equal(pod.serviceAccountName, sa);
      assert.equal(
        cron.spec.jobTemplate.spec.template.metadata.labels['app.kubernetes.io/name'],
        'ferry',
        'the stale-lock rule finds ferry pods by this label',
      );
      const [c] = pod.containers;
      assert.deepEqual([c.command, c.args], [['ferry-step'], args]);
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(c.securityContext.allowPrivilegeEscalation, false);
      assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
    }
  });

  it("has the sweep CronJob, running the dispatcher's sweep under its own account", () => {
    const sweep = find(jobs, 'CronJob', 'ferry-sweep');
    assert.notEqual(sweep.spec.suspend, true);
    assert.equal(sweep.spec.concurrencyPolicy, 'Forbid');
    const pod = sweep.spec.jobTemplate.spec.template.spec;
    assert.equal(pod.serviceAccountName, 'ferry-sweep');
    assert.deepEqual([pod.containers[0].command, pod.containers[0].args], [['ferry-dispatcher'], ['sweep']]);
  });
});

/** What a ServiceAccount may do, from the Roles and ClusterRoles bound to it. */
function can(sa: string, verb: string, group: string, resource: string, namespace: string): boolean {
  const subjectOf = (b: Obj) =>
    (b.subjects ?? []).some((s: Obj) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === 'ferry-system');
  const rulesOf = (kind: string, name: string, ns?: string) => {
    const role = policies.find(
      (o) => o.kind === kind && o.metadata.name === name && (kind === 'ClusterRole' || o.metadata.namespace === ns),
    );
    return (role?.rules ?? []) as Obj[];
  };
  const rules: Obj[] = [];
  for (const b of policies) {
    if (b.kind === 'ClusterRoleBinding' && subjectOf(b)) rules.push(...rulesOf('ClusterRole', b.roleRef.name));
    if (b.kind === 'RoleBinding' && subjectOf(b) && b.metadata.namespace === namespace)
      rules.push(...rulesOf(b.roleRef.kind, b.roleRef.name, namespace));
  }
  return rules.some(
    (r) =>
      r.apiGroups.includes(group) &&
      (r.resources.includes(resource) || r.resources.includes('*')) &&
      (r.verbs.includes(verb) || r.verbs.includes('*')),
  );
}

describe('policies/', () => {
  const accounts = [
    ...steps.map((s) => `ferry-step-${s}`),
    'ferry-dispatcher',
    'ferry-sweep',
    'ferry-step-maintenance',
    'ferry-maintenance-reconcile',
  ];

  it('has a ServiceAccount for every step, the dispatcher, the sweep and maintenance', () => {
    for (const sa of accounts) find(policies, 'ServiceAccount', sa);
  });

  it("lets no account read Secrets: a location's are mounted into the Jobs that open its repository", () => {
    for (const sa of accounts) {
      assert.equal(can(sa, 'get', '', 'secrets', 'ferry-system'), false, `${sa} reading Secrets in ferry-system`);
      assert.equal(can(sa, 'get', '', 'secrets', 'app'), false, `${sa} reading Secrets elsewhere`);
      assert.equal(can(sa, 'list', '', 'secrets', 'ferry-system'), false, `${sa} listing Secrets`);
    }
  });

  it('gives the dispatcher what it uses and not more', () => {
    const d = 'ferry-dispatcher';
    for (const [verb, group, resource, ns] of [
      ['get', 'batch', 'cronjobs', 'ferry-system'],
      ['create', 'batch', 'jobs', 'ferry-system'],
      ['list', 'batch', 'jobs', 'ferry-system'],
      ['get', 'ferry.dev', 'backupstoragelocations', 'ferry-system'],
      ['get', '', 'persistentvolumeclaims', 'app'],
      ['list', 'ferry.dev', 'datauploads', 'app'],
      ['list', 'ferry.dev', 'datadownloads', 'app'],
      ['get', 'ferry.dev', 'datauploads', 'app'],
      ['update', 'ferry.dev', 'datauploads/status', 'app'],
      ['update', 'ferry.dev', 'datadownloads/status', 'app'],
      ['list', '', 'nodes', ''],
      ['get', '', 'persistentvolumes', ''],
      ['create', 'events.k8s.io', 'events', 'app'],
    ])
      assert.ok(can(d, verb, group, resource, ns), `the dispatcher cannot ${verb} ${resource} in ${ns}`);
    assert.equal(can(d, 'create', 'batch', 'jobs', 'app'), false);
    assert.equal(can(d, 'delete', 'batch', 'jobs', 'ferry-system'), false);
    assert.equal(can(d, 'update', 'ferry.dev', 'datauploads', 'app'), false, 'the dispatcher never changes a spec');
    assert.ok(can('ferry-sweep', 'delete', 'batch', 'jobs', 'ferry-system'));
    assert.ok(can('ferry-sweep', 'delete', '', 'persistentvolumeclaims', 'ferry-system'));
    assert.equal(can('ferry-sweep', 'delete', '', 'persistentvolumeclaims', 'app'), false);
  });

  it("gives maintenance what it uses: the runs write their location's status, the reconciler only makes CronJobs", () => {
    const m = 'ferry-step-maintenance';
    for (const [verb, group, resource, ns] of [
      ['get', 'ferry.dev', 'backupstoragelocations', 'ferry-system'],
      ['update', 'ferry.dev', 'backupstoragelocations/status', 'ferry-system'],
      ['list', 'ferry.dev', 'datauploads', 'app'],
      ['list', '', 'pods', 'ferry-system'],
      ['create', 'events.k8s.io', 'events', 'ferry-system'],
    ])
      assert.ok(can(m, verb, group, resource, ns), `maintenance cannot ${verb} ${resource} in ${ns}`);
    assert.equal(
      can(m, 'update', 'ferry.dev', 'backupstoragelocations', 'ferry-system'),
      false,
      "maintenance never changes a location's spec",
    );
    assert.equal(can(m, 'create', 'batch', 'jobs', 'ferry-system'), false);
    const r = 'ferry-maintenance-reconcile';
    for (const verb of ['get', 'list', 'create', 'update'])
      assert.ok(can(r, verb, 'batch', 'cronjobs', 'ferry-system'), verb);
    assert.equal(can(r, 'create', 'batch', 'cronjobs', 'app'), false);
    assert.equal(
      can(r, 'delete', 'batch', 'cronjobs', 'ferry-system'),
      false,
      'the locations own their CronJobs; garbage collection deletes them',
    );
    assert.equal(can(r, 'create', 'batch', 'jobs', 'ferry-system'), false);
  });

  it("lets every step write its resources' status and record Events", () => {
    for (const step of steps) {
      const sa = `ferry-step-${step}`;
      assert.ok(can(sa, 'update', 'ferry.dev', 'datauploads/status', 'app'), sa);
      assert.ok(can(sa, 'create', 'events.k8s.io', 'events', 'app'), sa);
    }
    assert.equal(
      can('ferry-step-snapshot', 'update', 'ferry.dev', 'datadownloads/status', 'app'),
      false,
      'restores have no snapshot step',
    );
  });

  it('configures the webhook to fail closed, quickly, without side effects on dry runs, for spec and status', () => {
    const config = find(policies, 'ValidatingWebhookConfiguration', 'ferry-dispatcher');
    const [hook] = config.webhooks;
    assert.equal(hook.sideEffects, 'NoneOnDryRun');
    assert.equal(hook.failurePolicy, 'Fail');
    const budget = Number(settings.find((s) => s.key === 'budgetMs')!.default);
    assert.ok(
      hook.timeoutSeconds * 1000 > budget && hook.timeoutSeconds <= 10,
      'the timeout must leave the dispatcher its budget and stay small',
    );
    assert.equal(hook.clientConfig.service.path, settings.find((s) => s.key === 'path')!.default);
    const resources = hook.rules.flatMap((r: Obj) => r.resources);
    for (const r of ['datauploads', 'datauploads/status', 'datadownloads', 'datadownloads/status'])
      assert.ok(resources.includes(r), r);
    const service = find(deploy, 'Service', hook.clientConfig.service.name);
    assert.equal(service.metadata.namespace, hook.clientConfig.service.namespace);
    assert.ok(service.spec.ports.some((p: Obj) => p.port === hook.clientConfig.service.port));
  });
});

describe('deploy/', () => {
  it('labels ferry-system for Pod Security: baseline enforced, restricted warned and audited', () => {
    const labels = find(deploy, 'Namespace', 'ferry-system').metadata.labels;
    assert.equal(labels['pod-security.kubernetes.io/enforce'], 'baseline');
    assert.equal(labels['pod-security.kubernetes.io/warn'], 'restricted');
    assert.equal(labels['pod-security.kubernetes.io/audit'], 'restricted');
  });

  it('runs two dispatcher replicas that serve the webhook with the mounted certificate', () => {
    const d = find(deploy, 'Deployment', 'ferry-dispatcher');
    assert.equal(d.spec.replicas, 2);
    const pod = d.spec.template.spec;
    const [c] = pod.containers;
    assert.deepEqual([c.command, c.args], [['ferry-dispatcher'], ['serve']]);
    assert.equal(pod.serviceAccountName, 'ferry-dispatcher');
    const env = Object.fromEntries(c.env.filter((e: Obj) => e.value).map((e: Obj) => [e.name, e.value]));
    const mount = c.volumeMounts.find((m: Obj) => m.name === 'tls').mountPath;
    assert.equal(env.FERRY_TLS_CERT, `${mount}/tls.crt`);
    assert.equal(env.FERRY_TLS_KEY, `${mount}/tls.key`);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
  });

  it('lists every manifest in its kustomization', () => {
    for (const dir of ['jobs', 'policies']) {
      const k = yaml.load(readFileSync(join(root, dir, 'kustomization.yaml'), 'utf8')) as Obj;
      const files = readdirSync(join(root, dir))
        .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
        .sort();
      assert.deepEqual([...k.resources].sort(), files, dir);
    }
    const k = yaml.load(readFileSync(join(root, 'deploy', 'kustomization.yaml'), 'utf8')) as Obj;
    const crds = readdirSync(join(root, 'deploy', 'crds')).map((f) => `crds/${f}`);
    for (const entry of [...crds, 'namespace.yaml', 'config.yaml', 'dispatcher.yaml', '../jobs', '../policies'])
      assert.ok(k.resources.includes(entry), entry);
  });
});

describe('the copy kinds (DataCopy, CopyPolicy)', () => {
  it('go through the fail-closed webhook on create, update (spec and status), and a DataCopy on delete', () => {
    const [hook] = find(policies, 'ValidatingWebhookConfiguration', 'ferry-dispatcher').webhooks;
    assert.equal(hook.failurePolicy, 'Fail');
    const covered = (op: string, res: string): boolean =>
      hook.rules.some(
        (r: Obj) => r.apiGroups.includes('ferry.dev') && r.operations.includes(op) && r.resources.includes(res),
      );
    for (const res of ['datacopies', 'datacopies/status', 'copypolicies', 'copypolicies/status'])
      for (const op of ['CREATE', 'UPDATE']) assert.ok(covered(op, res), `${op} ${res}`);
    assert.ok(covered('DELETE', 'datacopies'), 'a deleted DataCopy needs its run');
  });

  it('let the dispatcher and the sweep make, patch and delete DataCopies and read CopyPolicies', () => {
    for (const sa of ['ferry-dispatcher', 'ferry-sweep']) {
      for (const verb of ['get', 'list', 'watch', 'create', 'delete', 'patch'])
        assert.ok(can(sa, verb, 'ferry.dev', 'datacopies', 'app'), `${sa} ${verb} datacopies`);
      assert.ok(can(sa, 'update', 'ferry.dev', 'datacopies/status', 'app'), `${sa} datacopies/status`);
      for (const verb of ['get', 'list', 'watch'])
        assert.ok(can(sa, verb, 'ferry.dev', 'copypolicies', 'ferry-system'), `${sa} ${verb} copypolicies`);
      assert.ok(can(sa, 'update', 'ferry.dev', 'copypolicies/status', 'ferry-system'));
      assert.equal(
        can(sa, 'update', 'ferry.dev', 'copypolicies', 'ferry-system'),
        false,
        "the policy is the administrator's",
      );
      assert.equal(can(sa, 'list', 'ferry.dev', 'copypolicies', 'app'), false, "policies live in ferry's namespace");
    }
  });
});
