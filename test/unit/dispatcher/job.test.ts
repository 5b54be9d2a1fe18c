// Step Jobs made from the templates in jobs/: the contract's name, labels, arguments and volume, the rest as the
// template says.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildJob, templateName } from '../../../src/shared/step-job/job.ts';
import { stepJob } from '../../../src/shared/step-job/jobs.ts';
import { jobName } from '../../../src/shared/step-job/contract.ts';
import { download, templates, upload } from './world.ts';

const template = (name: string) =>
  templates().find((t) => t.metadata.name === (name.startsWith('ferry-') ? name : `ferry-step-${name}`))!;
const backupTransfer = 'ferry-step-transfer-backup';
const restoreTransfer = 'ferry-step-transfer-restore';

describe('buildJob', () => {
  const r = upload('nightly', 'New');

  it('names, labels and points the Job at its resource', () => {
    const job = buildJob(template('snapshot'), {
      resource: r,
      step: 'snapshot',
      attempt: 2,
      namespace: 'ferry-system',
    }) as any;
    assert.equal(job.metadata.name, jobName('DataUpload', r.metadata.uid!, 'snapshot', 2));
    assert.equal(job.metadata.namespace, 'ferry-system');
    const expected = {
      'ferry.dev/kind': 'DataUpload',
      'ferry.dev/name': 'nightly',
      'ferry.dev/namespace': 'app',
      'ferry.dev/uid': r.metadata.uid,
      'ferry.dev/step': 'snapshot',
      'ferry.dev/attempt': '2',
    };
    for (const labels of [job.metadata.labels, job.spec.template.metadata.labels]) {
      for (const [k, v] of Object.entries(expected)) assert.equal(labels[k], v, k);
      assert.equal(labels['app.kubernetes.io/name'], 'ferry', 'the template labels stay');
    }
    const container = job.spec.template.spec.containers[0];
    assert.deepEqual(container.command, ['ferry-step']);
    assert.deepEqual(container.args, ['snapshot', 'DataUpload/app/nightly']);
    assert.equal(job.spec.template.spec.serviceAccountName, 'ferry-step-snapshot');
    assert.equal(job.spec.backoffLimit, 2);
    assert.equal(job.spec.template.spec.volumes.length, 1, "only the template's own /tmp");
    assert.deepEqual(stepJob(job), {
      name: job.metadata.name,
      uid: r.metadata.uid,
      step: 'snapshot',
      attempt: 2,
      state: 'active',
      created: '',
      finishedAt: undefined,
      message: undefined,
      node: undefined,
    });
  });

  it('leaves the template as it was', () => {
    const t = template(backupTransfer);
    const before = JSON.stringify(t);
    buildJob(t, {
      resource: r,
      step: 'transfer',
      attempt: 1,
      namespace: 'ferry-system',
      volume: { claimName: 'c', block: false, readOnly: true },
      node: 'n1',
    });
    assert.equal(JSON.stringify(t), before);
  });

  it("mounts a backup's filesystem volume read-only at /ferry/volume", () => {
    const job = buildJob(template(backupTransfer), {
      resource: r,
      step: 'transfer',
      attempt: 1,
      namespace: 'ferry-system',
      volume: { claimName: 'ferry-up-x', block: false, readOnly: true },
    }) as any;
    const pod = job.spec.template.spec;
    assert.deepEqual(
      pod.volumes.find((v: any) => v.name === 'ferry-volume'),
      { name: 'ferry-volume', persistentVolumeClaim: { claimName: 'ferry-up-x', readOnly: true } },
    );
    assert.deepEqual(
      pod.containers[0].volumeMounts.find((m: any) => m.name === 'ferry-volume'),
      { name: 'ferry-volume', mountPath: '/ferry/volume', readOnly: true },
    );
    assert.equal(pod.containers[0].volumeDevices, undefined);
  });

  it("mounts a restore's volume read-write, and a block volume as /ferry/device", () => {
    const d = download('restore', 'Prepared');
    const fsJob = buildJob(template(restoreTransfer), {
      resource: d,
      step: 'transfer',
      attempt: 1,
      namespace: 'ferry-system',
      volume: { claimName: 'v', block: false, readOnly: false },
    }) as any;
    assert.equal(
      fsJob.spec.template.spec.containers[0].volumeMounts.find((m: any) => m.name === 'ferry-volume').readOnly,
      false,
    );
    const blockJob = buildJob(template(restoreTransfer), {
      resource: d,
      step: 'transfer',
      attempt: 1,
      namespace: 'ferry-system',
      volume: { claimName: 'v', block: true, readOnly: false },
    }) as any;
    const c = blockJob.spec.template.spec.containers[0];
    assert.deepEqual(c.volumeDevices, [{ name: 'ferry-volume', devicePath: '/ferry/device' }]);
    assert.ok(!c.volumeMounts.some((m: any) => m.name === 'ferry-volume'));
  });

  it("pins the pod to a chosen node, keeping the template's node selector", () => {
    const job = buildJob(template(backupTransfer), {
      resource: r,
      step: 'transfer',
      attempt: 1,
      namespace: 'ferry-system',
      node: 'node-2',
    }) as any;
    assert.deepEqual(job.spec.template.spec.nodeSelector, {
      'kubernetes.io/os': 'linux',
      'kubernetes.io/hostname': 'node-2',
    });
    assert.equal(stepJob(job)?.node, 'node-2');
  });

  it("takes a backup's transfer from the read-only template and a restore's from the one that writes owners", () => {
    assert.equal(templateName('transfer', 'DataUpload'), backupTransfer);
    assert.equal(templateName('transfer', 'DataDownload'), restoreTransfer);
    assert.equal(templateName('delete', 'DataUpload'), 'ferry-step-delete');
    const caps = (name: string): string[] =>
      (template(name) as any).spec.jobTemplate.spec.template.spec.containers[0].securityContext.capabilities.add;
    for (const writing of ['CHOWN', 'FOWNER', 'FSETID', 'MKNOD', 'SETFCAP']) {
      assert.ok(!caps(backupTransfer).includes(writing), `a backup's transfer holds ${writing}`);
      assert.ok(caps(restoreTransfer).includes(writing), `a restore's transfer lacks ${writing}`);
    }
  });

  it("mounts the location's Secrets read-only, once each, where the step reads them", () => {
    const job = buildJob(template(backupTransfer), {
      resource: r,
      step: 'transfer',
      attempt: 1,
      namespace: 'ferry-system',
      secrets: ['s3-keys', 'repo-password'],
    }) as any;
    const pod = job.spec.template.spec;
    assert.deepEqual(
      pod.volumes.filter((v: any) => v.secret),
      [
        { name: 'ferry-secret-0', secret: { secretName: 's3-keys', optional: true } },
        { name: 'ferry-secret-1', secret: { secretName: 'repo-password', optional: true } },
      ],
    );
    assert.deepEqual(
      pod.containers[0].volumeMounts.filter((m: any) => m.name.startsWith('ferry-secret-')),
      [
        { name: 'ferry-secret-0', mountPath: '/ferry/secrets/s3-keys', readOnly: true },
        { name: 'ferry-secret-1', mountPath: '/ferry/secrets/repo-password', readOnly: true },
      ],
    );
  });

  it('refuses a template without a container named step', () => {
    const t = template('expose') as any;
    t.spec.jobTemplate.spec.template.spec.containers[0].name = 'main';
    assert.throws(
      () => buildJob(t, { resource: r, step: 'expose', attempt: 1, namespace: 'ferry-system' }),
      /CronJob ferry-step-expose has no container named "step"/,
    );
  });
});
