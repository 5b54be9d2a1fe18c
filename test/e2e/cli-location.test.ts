// Issue 35, storage locations as a newcomer meets them on the cluster in a box: `location create` takes the
// cross-namespace restore rules (--cross-namespace-restores, spec.crossNamespaceRestores) the README's restore into
// another namespace needs, and says what to fix in the flags just typed; `location delete` removes the location and
// the Secrets create made, refuses while a backup still keeps data in it, and says what stays in the bucket.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import { useCluster, type TestCluster } from '../support/cluster.ts';
import { backupCreateArgs, ferry, hasStackTrace, locationCreateArgs, type FerryRun } from '../support/ferry-cli.ts';
import { ferryNamespace, installFerry } from '../support/ferry-install.ts';
import { boundClaim } from './world.ts';

const id = randomBytes(3).toString('hex');
const name = `cli-loc-${id}`;
const bsl = (n: string) => `/apis/ferry.dev/v1alpha1/namespaces/${ferryNamespace}/backupstoragelocations/${n}`;
const secret = (n: string) => `/api/v1/namespaces/${ferryNamespace}/secrets/${n}`;

let cluster: TestCluster;
let app: string;
let restore: string;
let dir: string;
let env: Record<string, string>;

function run(args: string[]): Promise<FerryRun> {
  return ferry(args, { password: null, env });
}

function expectExit(r: FerryRun, code: number): string {
  const out = stripVTControlCharacters(r.stderr + r.stdout);
  assert.equal(r.code, code, out);
  assert.ok(!hasStackTrace(out), out);
  return out;
}

before(
  async () => {
    cluster = await useCluster('cli-location');
    await installFerry(cluster);
    app = await cluster.namespace('app');
    restore = await cluster.namespace('restore');
    dir = await mkdtemp(join(tmpdir(), 'ferry-cli-location-'));
    await writeFile(join(dir, 'secret-key'), `${cluster.s3.secretKey}\n`);
    await writeFile(join(dir, 'password'), `password ${id}\n`);
    env = { KUBECONFIG: cluster.kubeconfig, AWS_ACCESS_KEY_ID: cluster.s3.accessKey };
  },
  { timeout: 20 * 60_000 },
);

after(async () => {
  await cluster?.kube.delete(bsl(name));
  for (const s of [`${name}-s3-credentials`, `${name}-repository-password`]) await cluster?.kube.delete(secret(s));
  await cluster?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const create = (...more: string[]) =>
  locationCreateArgs(
    name,
    cluster.s3,
    `e2e/${name}`,
    app,
    { secretKey: join(dir, 'secret-key'), password: join(dir, 'password') },
    ...more,
  );

describe('ferry location, as a newcomer meets it', { timeout: 15 * 60_000 }, () => {
  it('a failed check names the flags just typed, not the fields they become', async () => {
    const missing = expectExit(await run(create('--bucket', `no-such-bucket-${id}`)), 1);
    assert.match(missing, /Create the bucket, or correct --bucket\. Nothing was created\./);
    assert.doesNotMatch(missing, /spec\.s3/);
    await writeFile(join(dir, 'wrong-key'), 'wrong\n');
    const wrong = expectExit(await run(create('--secret-key-file', join(dir, 'wrong-key'))), 1);
    assert.match(wrong, /--access-key and --secret-key-file/);
    assert.doesNotMatch(wrong, /credentials Secret/);
    const bad = expectExit(await run(create('--cross-namespace-restores', app)), 2);
    assert.match(bad, /--cross-namespace-restores "[^"]+" must be FROM=TO\[,TO\.\.\.\]/);
  });

  it('--cross-namespace-restores lets a restore read another namespace; delete refuses while a backup keeps data, then removes the location and its Secrets', async () => {
    expectExit(await run(create('--cross-namespace-restores', `${app}=${restore}`)), 0);
    const stored = await cluster.kube.get(bsl(name));
    assert.deepEqual(stored.spec.crossNamespaceRestores, [{ from: app, to: [restore] }]);

    await boundClaim(cluster, app, 'data', '16Mi');
    expectExit(await run([...backupCreateArgs('b1', 'data', app, name), '--wait']), 0);
    const restored = await run([
      'restore',
      'create',
      'r1',
      '--from',
      'b1',
      '-n',
      app,
      '--to-namespace',
      restore,
      '--wait',
    ]);
    assert.match(expectExit(restored, 0), /restore r1 Completed: restored /);
    // a namespace the rule does not name: refused, naming the flag and how to allow it
    const elsewhere = await cluster.namespace('elsewhere');
    const refusedRestore = await run([
      'restore',
      'create',
      'r2',
      '--from',
      'b1',
      '-n',
      app,
      '--to-namespace',
      elsewhere,
    ]);
    const said = expectExit(refusedRestore, 2);
    assert.match(
      said,
      new RegExp(`--to-namespace: .*does not allow restores from namespace ${app} into namespace ${elsewhere}`),
    );
    assert.match(said, new RegExp(`--cross-namespace-restores ${app}=${elsewhere}`));
    assert.match(said, new RegExp(`kubectl patch bsl ${name} -n ${ferryNamespace} --type merge`));

    const refused = expectExit(await run(['location', 'delete', name]), 1);
    assert.match(refused, new RegExp(`was not deleted: 1 backup\\(s\\) still keep data in it \\(${app}/b1\\)`));
    assert.match(refused, /--keep-data/);
    assert.ok(await cluster.kube.find(bsl(name)), 'the location stays');

    expectExit(await run(['backup', 'delete', 'b1', '-n', app, '--wait']), 0);
    const deleted = expectExit(await run(['location', 'delete', name]), 0);
    assert.match(deleted, new RegExp(`Secret\\(s\\) ${name}-s3-credentials, ${name}-repository-password deleted`));
    assert.match(deleted, new RegExp(`The bucket keeps what is in s3://${cluster.s3.bucket}/e2e/${name}/`));
    assert.match(deleted, /aws s3 rm --recursive/);
    assert.equal(await cluster.kube.find(bsl(name)), undefined);
    assert.equal(await cluster.kube.find(secret(`${name}-s3-credentials`)), undefined);
    assert.equal(await cluster.kube.find(secret(`${name}-repository-password`)), undefined);
  });
});
