// Issue 6, operator commands on the cluster in a box, each run as a real `ferry` process: location create (Secrets
// from files and the environment, checked against MinIO first, never echoed), get and describe; schedule create, get,
// describe, suspend, resume and delete; install rendered, and checked by the apiserver as a dry run; doctor on the
// healthy install and on breakage made so that other suites sharing the box are not disturbed: a second location with
// wrong credentials (ours only), a copy of the webhook configuration with a wrong caBundle that intercepts nothing
// (its namespaceSelector matches no namespace), and a CSI driver with no VolumeSnapshotClass that exists only for the
// few seconds doctor runs; bad usage, exit 2 naming the flag.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import yaml from 'js-yaml';
import { renderInstall } from '../../src/shared/install/install.ts';
import { useCluster, type TestCluster } from '../support/cluster.ts';
import { ferry, hasStackTrace, locationCreateArgs, parseJSON, type FerryRun } from '../support/ferry-cli.ts';
import { ferryNamespace, installFerry } from '../support/ferry-install.ts';
import { writeKubeconfig } from '../support/kubeconfig.ts';
import { makeTestCertificates } from '../support/test-ca.ts';

type Obj = Record<string, any>;

const id = randomBytes(3).toString('hex');
const good = `cli-ops-${id}`;
const broken = `cli-ops-broken-${id}`;
const locationPassword = `location secret ${randomBytes(8).toString('hex')}`;
const bsl = (name: string) => `/apis/ferry.dev/v1alpha1/namespaces/${ferryNamespace}/backupstoragelocations/${name}`;
const secret = (name: string) => `/api/v1/namespaces/${ferryNamespace}/secrets/${name}`;

let cluster: TestCluster;
let app: string;
let dir: string;
let env: Record<string, string>;
const madeSecrets: string[] = [];

/** `ferry ARGS` against the box; secrets reach it only through files and the environment. */
function run(args: string[], extraEnv: Record<string, string> = {}): Promise<FerryRun> {
  return ferry(args, { password: null, env: { ...env, ...extraEnv } });
}

function expectExit(r: FerryRun, code: number, args: string): void {
  assert.equal(r.code, code, `ferry ${args} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  assert.ok(!hasStackTrace(r.stderr + r.stdout), `no stack trace:\n${r.stderr}`);
}

function findings(r: FerryRun): Obj[] {
  return parseJSON<{ findings: Obj[] }>(r).findings;
}

before(
  async () => {
    cluster = await useCluster('cli-ops');
    await installFerry(cluster);
    app = await cluster.namespace('app');
    dir = await mkdtemp(join(tmpdir(), 'ferry-cli-ops-'));
    await writeFile(join(dir, 'secret-key'), `${cluster.s3.secretKey}\n`);
    await writeFile(join(dir, 'wrong-key'), 'not-the-secret-key\n');
    await writeFile(join(dir, 'password'), `${locationPassword}\n`);
    env = { KUBECONFIG: cluster.kubeconfig, AWS_ACCESS_KEY_ID: cluster.s3.accessKey };
  },
  { timeout: 20 * 60_000 },
);

after(async () => {
  for (const name of [good, broken]) await cluster?.kube.delete(bsl(name));
  for (const name of madeSecrets) await cluster?.kube.delete(secret(name));
  await cluster?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('ferry location', { timeout: 10 * 60_000 }, () => {
  it('creates a location and its Secrets from files and the environment, after the bucket answered, and never prints them', async () => {
    madeSecrets.push(`${good}-s3-credentials`, `${good}-repository-password`);
    const args = locationCreateArgs(
      good,
      cluster.s3,
      `e2e/${good}`,
      app,
      { secretKey: join(dir, 'secret-key'), password: join(dir, 'password') },
      '--region',
      cluster.s3.region,
    );
    const r = await run(args);
    expectExit(r, 0, 'location create');
    assert.match(
      r.stderr + r.stdout,
      new RegExp(`BackupStorageLocation ${good} created in ${ferryNamespace}: .* is reachable and listable`),
    );
    const created = await cluster.kube.get(bsl(good));
    assert.equal(created.status.phase, 'Available');
    assert.deepEqual(created.spec.allowedNamespaces, [app]);
    const creds = await cluster.kube.get(secret(`${good}-s3-credentials`));
    assert.equal(Buffer.from(creds.data.AWS_ACCESS_KEY_ID, 'base64').toString(), cluster.s3.accessKey);
    assert.equal(Buffer.from(creds.data.AWS_SECRET_ACCESS_KEY, 'base64').toString(), cluster.s3.secretKey);
    const password = await cluster.kube.get(secret(`${good}-repository-password`));
    assert.equal(Buffer.from(password.data.password, 'base64').toString(), locationPassword);

    const again = await run(args);
    expectExit(again, 1, 'location create (again)');
    assert.match(again.stderr, new RegExp(`BackupStorageLocation "${good}" already exists`));

    const listed = await run(['location', 'get', '-o', 'json']);
    expectExit(listed, 0, 'location get -o json');
    assert.ok(parseJSON<Obj>(listed).items.some((l: Obj) => l.metadata.name === good));
    const wide = await run(['location', 'get', good, '-o', 'wide']);
    expectExit(wide, 0, 'location get -o wide');
    assert.match(wide.stdout, /^NAME\s+PHASE\s+ENDPOINT\s+BUCKET\s+PREFIX\s+AGE\s+REGION\s+NAMESPACES\s+CREDENTIALS/);
    assert.match(
      wide.stdout,
      new RegExp(`${good}\\s+Available\\s+${cluster.s3.endpoint.replace(/[./]/g, '\\$&')}\\s+${cluster.s3.bucket}`),
    );

    const described = await run(['location', 'describe', good]);
    expectExit(described, 0, 'location describe');
    assert.match(described.stdout, /Check:\n\s+Result:\s+reachable/);
    assert.match(described.stdout, new RegExp(`Credentials:\\s+${good}-s3-credentials`));
    const doc = await run(['location', 'describe', good, '-o', 'yaml']);
    expectExit(doc, 0, 'location describe -o yaml');
    const parsed = yaml.load(doc.stdout) as Obj;
    assert.equal(parsed.location.metadata.name, good);
    assert.equal(parsed.check.ok, true);

    for (const out of [r, listed, wide, described, doc]) {
      assert.ok(!(out.stdout + out.stderr).includes(cluster.s3.secretKey), 'the S3 secret key is never printed');
      assert.ok(!(out.stdout + out.stderr).includes(locationPassword), 'the repository password is never printed');
    }
  });

  it('refuses, creating nothing, when the bucket does not answer with the credentials, naming what failed', async () => {
    const base = [
      'location',
      'create',
      broken,
      '--endpoint',
      cluster.s3.endpoint,
      '--bucket',
      cluster.s3.bucket,
      '--allowed-namespaces',
      app,
      '--password-file',
      join(dir, 'password'),
    ];
    const cases: [string[], RegExp][] = [
      [
        ['--secret-key-file', join(dir, 'wrong-key')],
        /rejected the credentials \(SignatureDoesNotMatch\)\. Put the right access key ID and secret key/,
      ],
      [['--bucket', `no-such-bucket-${id}`], new RegExp(`Bucket "no-such-bucket-${id}" does not exist`)],
      [['--endpoint', 'http://127.0.0.1:1'], /Nothing answers at http:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)/],
    ];
    for (const [extra, message] of cases) {
      const r = await run([...base, ...extra], { AWS_SECRET_ACCESS_KEY: cluster.s3.secretKey });
      expectExit(r, 1, `location create ${extra.join(' ')}`);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /Nothing was created\./);
    }
    assert.equal(await cluster.kube.find(bsl(broken)), undefined);
    assert.equal(await cluster.kube.find(secret(`${broken}-s3-credentials`)), undefined);
    assert.equal(await cluster.kube.find(secret(`${broken}-repository-password`)), undefined);
  });
});

describe('ferry schedule', { timeout: 10 * 60_000 }, () => {
  it('creates, lists, describes, suspends, resumes and deletes a schedule', async () => {
    const created = await run([
      'schedule',
      'create',
      'nightly',
      '-n',
      app,
      '--schedule',
      '30 2 * * *',
      '--time-zone',
      'Europe/Paris',
      '--pvc',
      'data,logs',
      '--location',
      good,
      '--expire',
      '720h',
      '--keep-daily',
      '7',
      '--keep-weekly',
      '4',
      '-o',
      'json',
    ]);
    expectExit(created, 0, 'schedule create');
    const obj = parseJSON<Obj>(created);
    // what the flags said, and the CRD's defaults for the rest
    assert.deepEqual(obj.spec, {
      schedule: '30 2 * * *',
      timeZone: 'Europe/Paris',
      pvcs: ['data', 'logs'],
      backupStorageLocation: good,
      expire: '720h',
      retention: { keepDaily: 7, keepWeekly: 4 },
      concurrencyPolicy: 'Forbid',
      snapshotMoveData: true,
      suspend: false,
    });

    const table = await run(['schedule', 'get', '-n', app]);
    expectExit(table, 0, 'schedule get');
    assert.match(table.stdout, /^NAME\s+SCHEDULE\s+SUSPEND\s+LAST RUN\s+LAST SCHEDULE\s+LOCATION\s+AGE\n/);
    assert.match(table.stdout, new RegExp(`nightly\\s+30 2 \\* \\* \\*\\s+false\\s+${good}`));
    const wide = await run(['schedule', 'get', 'nightly', '-n', app, '-o', 'wide']);
    assert.match(wide.stdout, /Europe\/Paris\s+data,logs/);
    const listed = yaml.load((await run(['schedule', 'get', '-n', app, '-o', 'yaml'])).stdout) as Obj;
    assert.deepEqual(
      listed.items.map((s: Obj) => s.metadata.name),
      ['nightly'],
    );

    const suspended = await run(['schedule', 'suspend', 'nightly', '-n', app]);
    expectExit(suspended, 0, 'schedule suspend');
    assert.equal(
      (await cluster.kube.get(`/apis/ferry.dev/v1alpha1/namespaces/${app}/backupschedules/nightly`)).spec.suspend,
      true,
    );
    const described = await run(['schedule', 'describe', 'nightly', '-n', app]);
    expectExit(described, 0, 'schedule describe');
    assert.match(described.stdout, /Cron:\s+30 2 \* \* \*\n\s+Time zone:\s+Europe\/Paris\n\s+Suspended:\s+true/);
    assert.match(described.stdout, /Retention:\s+daily 7, weekly 4/);
    const resumed = await run(['schedule', 'resume', 'nightly', '-n', app, '-o', 'json']);
    expectExit(resumed, 0, 'schedule resume');
    assert.equal(parseJSON<Obj>(resumed).spec.suspend, false);

    const deleted = await run(['schedule', 'delete', 'nightly', '-n', app]);
    expectExit(deleted, 0, 'schedule delete');
    assert.match(deleted.stderr + deleted.stdout, /deleted; its backups stay/);
    await cluster.kube.waitFor(
      `/apis/ferry.dev/v1alpha1/namespaces/${app}/backupschedules`,
      'the schedule to go',
      (l) => (l.items.length === 0 ? true : undefined),
    );
    const missing = await run(['schedule', 'describe', 'nightly', '-n', app]);
    expectExit(missing, 1, 'schedule describe (deleted)');
    assert.match(missing.stderr, new RegExp(`BackupSchedule "nightly" not found in namespace ${app}`));
  });
});

describe('ferry install', { timeout: 10 * 60_000 }, () => {
  it('prints deploy/ moved to the chosen namespace and image', async () => {
    const r = await run([
      'install',
      '--dry-run',
      '--namespace',
      'backup-ops',
      '--image',
      'registry.example:5000/ferry:1.2',
    ]);
    expectExit(r, 0, 'install --dry-run');
    const printed = (yaml.loadAll(r.stdout) as Obj[]).filter(Boolean);
    assert.deepEqual(
      printed,
      JSON.parse(
        JSON.stringify(await renderInstall({ namespace: 'backup-ops', image: 'registry.example:5000/ferry:1.2' })),
      ),
    );
    assert.ok(printed.some((o) => o.kind === 'Namespace' && o.metadata.name === 'backup-ops'));
    assert.ok(printed.every((o) => o.metadata.namespace === undefined || o.metadata.namespace === 'backup-ops'));
    const images = JSON.stringify(printed).match(/"image":"[^"]+"/g) ?? [];
    assert.ok(
      images.length >= 7 && images.every((i) => i === '"image":"registry.example:5000/ferry:1.2"'),
      images.join(' '),
    );
    const json = await run(['install', '--dry-run', '-o', 'json']);
    assert.equal(parseJSON<Obj>(json).kind, 'List');
  });

  it('has the apiserver check every object as a dry run, storing nothing', async () => {
    const target = await cluster.namespace('install');
    const r = await run(['install', '--server-dry-run', '--namespace', target]);
    expectExit(r, 0, 'install --server-dry-run');
    const count = (await renderInstall({ namespace: target })).length;
    assert.match(
      r.stderr + r.stdout,
      new RegExp(`${count} objects accepted by the apiserver \\(dry run, nothing stored\\)`),
    );
    assert.deepEqual((await cluster.kube.get(`/apis/apps/v1/namespaces/${target}/deployments`)).items, []);
    assert.deepEqual(
      (await cluster.kube.get(`/api/v1/namespaces/${target}/configmaps?labelSelector=app.kubernetes.io%2Fname%3Dferry`))
        .items,
      [],
    );
  });
});

describe('ferry doctor', { timeout: 15 * 60_000 }, () => {
  it('finds a healthy install healthy', async (t) => {
    const started = Date.now();
    const r = await run(['doctor', '--location', good]);
    expectExit(r, 0, 'doctor');
    t.diagnostic(`doctor took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.match(r.stdout, /looks healthy\.\n$/);
    const doc = await run(['doctor', '--location', good, '-o', 'json']);
    expectExit(doc, 0, 'doctor -o json');
    const all = findings(doc);
    assert.deepEqual(
      [...new Set(all.map((f) => f.area))],
      ['crds', 'dispatcher', 'webhook-ca', 'snapshots', 'locations', 'velero'],
    );
    assert.deepEqual(
      all.filter((f) => f.severity !== 'ok'),
      [],
    );
    assert.ok(all.some((f) => f.area === 'dispatcher' && /judged a dry-run DataUpload/.test(f.message)));
    assert.ok(all.some((f) => f.area === 'snapshots' && f.subject === 'local.csi.ferry.dev'));
  });

  it('reports a location with wrong credentials, with the fix', async () => {
    madeSecrets.push(`${broken}-creds`);
    await cluster.kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${broken}-creds` },
      stringData: { AWS_ACCESS_KEY_ID: cluster.s3.accessKey, AWS_SECRET_ACCESS_KEY: 'wrong' },
    });
    const spec = { ...(await cluster.kube.get(bsl(good))).spec, credential: { name: `${broken}-creds` } };
    await cluster.kube.create(`/apis/ferry.dev/v1alpha1/namespaces/${ferryNamespace}/backupstoragelocations`, {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name: broken },
      spec,
    });
    const r = await run(['doctor', '--location', `${good},${broken}`, '-o', 'json']);
    expectExit(r, 1, 'doctor (wrong credentials)');
    const bad = findings(r).filter((f) => f.severity === 'problem');
    assert.deepEqual(
      bad.map((f) => `${f.area}/${f.subject}`),
      [`locations/${broken}`],
    );
    assert.match(bad[0].message, /rejected the credentials \(SignatureDoesNotMatch\)/);
    assert.match(bad[0].fix, /right access key ID and secret key/);
    const text = await run(['doctor', '--location', broken]);
    expectExit(text, 1, 'doctor (wrong credentials, text)');
    assert.match(text.stdout, /✖ BackupStorageLocation .*rejected the credentials.*\n\s+fix: /);
    assert.match(text.stderr, /ferry doctor found 1 problem in ferry-system/);
  });

  it('reports a webhook whose caBundle does not match the serving certificate', async () => {
    const other = await makeTestCertificates(dir, 'other.crt', 'other.key');
    const wrongCa = await readFile(other.caFile);
    const live = await cluster.kube.get(
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/ferry-dispatcher',
    );
    const copy = `cli-ops-webhook-${id}`;
    // a copy that can never intercept anything: its namespaceSelector matches no namespace
    const webhooks = live.webhooks.map((h: Obj) => ({
      ...h,
      clientConfig: { ...h.clientConfig, caBundle: wrongCa.toString('base64') },
      namespaceSelector: { matchLabels: { 'ferry.dev/doctor-test': copy } },
    }));
    await cluster.kube.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: copy },
      webhooks,
    });
    try {
      const r = await run(['doctor', '--webhook', copy, '--location', good, '-o', 'json']);
      expectExit(r, 1, 'doctor (wrong caBundle)');
      const bad = findings(r).filter((f) => f.severity === 'problem');
      assert.ok(bad.length >= 1 && bad.every((f) => f.area === 'webhook-ca'), JSON.stringify(bad));
      assert.match(bad[0].message, /does not hold the CA that signed the serving certificate/);
      assert.match(bad[0].fix, /Set clientConfig.caBundle of cli-ops-webhook-/);
    } finally {
      await cluster.kube.delete(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${copy}`);
    }
  });

  it('reports a CSI driver in use without a VolumeSnapshotClass', async () => {
    const driver = `cli-ops-${id}.csi.ferry.dev`;
    const storageClass = `cli-ops-${id}`;
    // cluster-wide, but unused by anyone and gone within seconds
    await cluster.kube.create('/apis/storage.k8s.io/v1/csidrivers', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: driver },
      spec: { attachRequired: false },
    });
    try {
      await cluster.kube.create('/apis/storage.k8s.io/v1/storageclasses', {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: storageClass },
        provisioner: driver,
        volumeBindingMode: 'WaitForFirstConsumer',
      });
      const r = await run(['doctor', '--location', good, '-o', 'json']);
      expectExit(r, 1, 'doctor (no VolumeSnapshotClass)');
      const bad = findings(r).filter((f) => f.severity === 'problem');
      assert.deepEqual(
        bad.map((f) => `${f.area}/${f.subject}`),
        [`snapshots/${driver}`],
      );
      assert.match(bad[0].message, new RegExp(`used by StorageClass ${storageClass}\\) has no VolumeSnapshotClass`));
      assert.match(
        bad[0].fix,
        new RegExp(`Create one: .*kind: VolumeSnapshotClass, driver: ${driver.replace(/\./g, '\\.')}`),
      );
    } finally {
      await cluster.kube.delete(`/apis/storage.k8s.io/v1/storageclasses/${storageClass}`);
      await cluster.kube.delete(`/apis/storage.k8s.io/v1/csidrivers/${driver}`);
    }
  });

  it('says what it could not check when the user lacks the rights, with the fix', async () => {
    await cluster.kube.create(`/api/v1/namespaces/${app}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'no-rights' },
    });
    const token = await cluster.kube.create(`/api/v1/namespaces/${app}/serviceaccounts/no-rights/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 600 },
    });
    const kubeconfig = join(dir, 'no-rights.kubeconfig');
    await writeKubeconfig(kubeconfig, { server: cluster.server, token: token.status.token, ca: cluster.access.ca });
    const r = await run(['doctor', '-o', 'json'], { KUBECONFIG: kubeconfig });
    expectExit(r, 1, 'doctor (no rights)');
    const all = findings(r);
    assert.deepEqual(
      all.map((f) => `${f.area}/${f.severity}`),
      ['crds', 'dispatcher', 'webhook-ca', 'snapshots', 'locations', 'velero'].map((a) => `${a}/problem`),
    );
    for (const f of all) {
      assert.match(f.message, new RegExp(`^Could not check ${f.area}: .*forbidden`));
      assert.match(f.fix, /with rights to read what it checks/);
    }
  });

  it('reports a namespace without ferry: no dispatcher, no location', async () => {
    const empty = await cluster.namespace('empty');
    const r = await run(['doctor', '--namespace', empty, '-o', 'yaml']);
    expectExit(r, 1, 'doctor (empty namespace)');
    const report = yaml.load(r.stdout) as Obj;
    assert.equal(report.healthy, false);
    const messages = report.findings.filter((f: Obj) => f.severity !== 'ok').map((f: Obj) => `${f.area}: ${f.message}`);
    assert.ok(
      messages.includes(
        `dispatcher: No dispatcher Deployment (label app.kubernetes.io/component=dispatcher) in namespace ${empty}.`,
      ),
      messages.join('\n'),
    );
    assert.ok(
      messages.includes(`locations: There is no BackupStorageLocation in ${empty}, so nothing can be backed up.`),
      messages.join('\n'),
    );
  });
});

// each case is a short process that fails before any request: a few at a time
describe('bad usage', { timeout: 5 * 60_000, concurrency: 4 }, () => {
  // a valid daily schedule, to which a case adds one bad flag
  const dailySchedule = ['schedule', 'create', 's', '--schedule', '@daily', '--pvc', 'a', '--location', 'l'];
  const cases: [string[], RegExp][] = [
    [['location', 'create', 'x'], /--endpoint is required/],
    [
      ['location', 'create', 'x', '--endpoint', 'ftp://s3', '--bucket', 'b', '--allowed-namespaces', '*'],
      /--endpoint "ftp:\/\/s3" must be http\(s\):\/\/HOST\[:PORT\]/,
    ],
    [['location', 'create', 'x', '--endpoint', 'http://s3', '--bucket', 'b'], /--allowed-namespaces is required/],
    [
      [
        'location',
        'create',
        'x',
        '--endpoint',
        'http://s3',
        '--bucket',
        'b',
        '--allowed-namespaces',
        '*',
        '--password-file',
        '/nonexistent',
      ],
      /cannot read --password-file \/nonexistent: ENOENT/,
    ],
    [['location', 'get', 'Bad_Name'], /NAME "Bad_Name" is not a valid object name/],
    [['location', 'describe'], /NAME|name/],
    [['schedule', 'create', 's', '--schedule', '* * *', '--pvc', 'a', '--location', 'l'], /--schedule "\* \* \*"/],
    [['schedule', 'create', 's', '--schedule', '@daily', '--location', 'l'], /--pvc or --selector is required/],
    [[...dailySchedule, '--time-zone', 'Mars/Olympus'], /--time-zone "Mars\/Olympus"/],
    [
      [...dailySchedule, '--concurrency-policy', 'Sometimes'],
      /--concurrency-policy "Sometimes" must be one of Allow, Forbid, Replace/,
    ],
    [[...dailySchedule, '--jitter', 'soon'], /--jitter: must be a duration/],
    [['schedule', 'suspend'], /NAME|name/],
    [['schedule', 'get', '-o', 'toml'], /-o toml is not an output format; use json, yaml or wide/],
    [['install', '--namespace', 'Ops'], /--namespace "Ops" is not a namespace name/],
    [['install', '--dry-run', '--image', 'bad image'], /--image: "bad image" is not an image reference/],
    [['install', '--dry-run', '--server-dry-run'], /--dry-run and --server-dry-run exclude each other/],
    [['doctor', '--location', 'a,B'], /--location "B" is not a valid object name/],
    [['doctor', '--bogus'], /unknown flag --bogus/],
  ];
  for (const [args, message] of cases) {
    it(`ferry ${args.join(' ')}`, async () => {
      const r = await run(args);
      expectExit(r, 2, args.join(' '));
      assert.match(r.stderr, message);
      assert.match(r.stderr, /\(see --help\)/);
    });
  }
});
