// The step table `ferry-step` runs from: one description per name in the shared list, a usage that shows them
// all, names that are not steps refused before anything connects, and every argument list ferry writes into a
// step's pod (the dispatcher's Jobs, the schedule and maintenance CronJobs, the templates in jobs/) accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { startReconcile } from '../../../src/dispatcher/schedule.ts';
import {
  stepCommands,
  stepNames,
  type BackupSchedule,
  type BackupStorageLocation,
} from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { buildJob, templateName } from '../../../src/shared/step-job/job.ts';
import { desiredCronJob, desiredSyncCronJob, tasks } from '../../../src/steps/maintenance/cronjobs.ts';
import { buildRunCronJob } from '../../../src/steps/schedule/reconcile.ts';
import { findStep, stepTable } from '../../../src/steps/table.ts';
import { download, templates, upload } from '../dispatcher/world.ts';
import { ferryNamespace, location } from './harness.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const run = promisify(execFile);

interface Exit {
  code: number;
  stderr: string;
  termination: { outcome: string; reason: string };
}

/** `ferry-step ARGS` as a pod runs it, with no cluster to reach: what it printed, wrote and exited with. */
async function ferryStep(args: string[]): Promise<Exit> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-step-table-'));
  try {
    const env = {
      ...process.env,
      FERRY_TERMINATION_LOG: join(dir, 'termination'),
      KUBECONFIG: join(dir, 'no-kubeconfig'),
      KUBERNETES_SERVICE_HOST: '',
    };
    let code = 0;
    let stderr = '';
    try {
      ({ stderr } = await run(process.execPath, [join(root, 'src', 'entry', 'step.ts'), ...args], {
        env,
        timeout: 30_000,
      }));
    } catch (err) {
      const e = err as { code: number; stderr: string };
      code = e.code;
      stderr = e.stderr;
    }
    return { code, stderr, termination: JSON.parse(await readFile(join(dir, 'termination'), 'utf8')) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function containerArgs(podOwner: KubeObject): string[] {
  const spec = podOwner.spec as {
    template?: { spec: PodSpec };
    jobTemplate?: { spec: { template: { spec: PodSpec } } };
  };
  const pod = spec.template?.spec ?? spec.jobTemplate?.spec.template.spec;
  const step = pod?.containers.find((c) => c.name === 'step');
  assert.ok(step?.args, `${podOwner.kind} ${podOwner.metadata.name} has a step container with arguments`);
  return step.args;
}

interface PodSpec {
  containers: { name: string; command?: string[]; args?: string[] }[];
}

/** The description the entry point would pick for these arguments, which must parse them. */
function accepts(args: string[]): string {
  const step = findStep(args[0]);
  assert.ok(step, `"${args[0]}" is in the step table`);
  step.parse(args.slice(1));
  return step.name;
}

test('every name in the shared list has exactly one description, filed under its own name', () => {
  assert.deepEqual(Object.keys(stepTable).sort(), [...stepCommands].sort());
  for (const name of stepCommands) assert.equal(stepTable[name].name, name);
  assert.equal(new Set(Object.values(stepTable)).size, stepCommands.length, 'no description serves two names');
  for (const name of stepNames)
    assert.ok(stepCommands.includes(name), `the data step ${name} is something ferry-step runs`);
});

test('ferry-step without a step lists every step in the shared list, one usage line each, and exits 2', async () => {
  const out = await ferryStep([]);
  assert.equal(out.code, 2);
  const lines = out.stderr.trim().split('\n').slice(1);
  assert.deepEqual(
    lines.map((l) => l.replace(/^(usage:| {3}or:) /, '')),
    stepCommands.map((name) => stepTable[name].usage),
  );
  for (const name of stepCommands)
    assert.ok(
      lines.some((l) => l.includes(`ferry-step ${name} `)),
      `usage names ${name}`,
    );
  assert.equal(out.termination.outcome, 'Error');
});

test('a name that is not a step, a property every object has included, is bad usage before anything connects', async () => {
  for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'Snapshot', 'sweep', ''])
    assert.equal(findStep(name), undefined, name);
  const out = await ferryStep(['toString', 'DataUpload/app/nightly']);
  assert.equal(out.code, 2, out.stderr);
  assert.match(out.stderr, /"toString" is not a step/);
  assert.deepEqual(out.termination, { outcome: 'Error', reason: '"toString" is not a step' });
});

test('bad arguments to a known step name the step and say what is wrong; ferry-step adds its usage and exits 2', async () => {
  const cases: [string[], RegExp][] = [
    [['snapshot'], /the snapshot step takes one argument, a resource or --sweep; got 0/],
    [['transfer', 'DataUpload/app/a', 'DataUpload/app/b'], /the transfer step takes one argument/],
    [['expose', 'Pod/app/nightly'], /"Pod\/app\/nightly" does not name a resource: expected DataUpload/],
    [['schedule', 'app/nightly', '--now'], /the schedule command takes one argument/],
    [['schedule-run', 'nightly'], /"nightly" does not name a BackupSchedule: expected <namespace>\/<name>/],
    [
      ['app-restore', 'AppBackup/app/db'],
      /"AppBackup\/app\/db" does not name an AppRestore: expected <namespace>\/<name>/,
    ],
    [['app-restore', 'app/back', 'app/other'], /the app-restore command takes one argument, an AppRestore/],
    [
      ['maintenance', 'default', 'vacuum'],
      /"default vacuum" does not name a storage location and a task \(prune, check, check-data\)/,
    ],
  ];
  for (const [[name, ...args], message] of cases) assert.throws(() => findStep(name)!.parse(args), message);
  const out = await ferryStep(['expose', 'Pod/app/nightly']);
  assert.equal(out.code, 2);
  assert.match(out.termination.reason, /does not name a resource/);
  assert.ok(out.stderr.includes(`usage: ${stepTable.expose.usage}`), out.stderr);
});

test('every argument list ferry writes into a step pod is one the step table accepts', async () => {
  const seen = new Set<string>();
  // the dispatcher's step Jobs, for both kinds
  for (const step of stepNames) {
    for (const r of step === 'snapshot'
      ? [upload('nightly', 'New')]
      : [upload('nightly', 'New'), download('restore', 'New')]) {
      const template = templates().find((t) => t.metadata.name === templateName(step, r.kind))!;
      seen.add(
        accepts(containerArgs(buildJob(template, { resource: r, step, attempt: 1, namespace: ferryNamespace }))),
      );
    }
  }
  // the dispatcher's schedule reconcile Job and the run CronJob it makes
  const schedule: BackupSchedule & KubeObject = {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: 'nightly', namespace: 'app', uid: 'abcdef01-2345-4000-8000-000000000000', generation: 1 },
    spec: { schedule: '0 3 * * *', pvcs: ['data'], backupStorageLocation: 'default' },
  };
  const load = async (file: string) => yaml.loadAll(await readFile(join(root, 'jobs', file), 'utf8')) as KubeObject[];
  const kube = new MemoryKube();
  kube.seed(...(await load('schedule.yaml')));
  await startReconcile(schedule, { kube, namespace: ferryNamespace });
  for (const job of await kube.list<KubeObject>('Job', { namespace: ferryNamespace }))
    seen.add(accepts(containerArgs(job)));
  seen.add(accepts(containerArgs(buildRunCronJob((await load('schedule-run.yaml'))[0], schedule, ferryNamespace))));
  // a location's maintenance CronJobs
  const [maintenanceTemplate] = await load('maintenance.yaml');
  for (const task of tasks)
    seen.add(
      accepts(
        containerArgs(desiredCronJob(maintenanceTemplate, location()[0] as BackupStorageLocation & KubeObject, task)),
      ),
    );
  // a location's backup sync CronJob
  seen.add(
    accepts(
      containerArgs(desiredSyncCronJob(maintenanceTemplate, location()[0] as BackupStorageLocation & KubeObject)),
    ),
  );
  // the templates themselves, where their arguments are complete (the maintenance one is completed per location)
  for (const file of (await readdir(join(root, 'jobs'))).filter(
    (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && f !== 'maintenance.yaml',
  )) {
    for (const cron of await load(file)) {
      const pod = (cron.spec as { jobTemplate?: { spec: { template: { spec: PodSpec } } } } | undefined)?.jobTemplate
        ?.spec.template.spec;
      if (pod?.containers.some((c) => c.name === 'step' && c.command?.[0] === 'ferry-step'))
        seen.add(accepts(containerArgs(cron)));
    }
  }
  assert.deepEqual(
    [...seen].sort(),
    [...stepCommands].sort(),
    'every step is started somewhere, by arguments it accepts',
  );
});
