// The box runs workloads as a real cluster would: Jobs to completion with their data on the PVC, retries up to
// backoffLimit, CronJobs, memory limits, deadlines, graceful deletion, the pod's environment and files.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { useCluster } from '../support/cluster.ts';
import type { TestCluster } from '../support/cluster.ts';
import { statePaths } from './paths.ts';
import {
  claimObject,
  claimsPath,
  ferryImage,
  jobCondition,
  jobObject,
  jobsPath,
  podFinished,
  podObject,
  podsPath,
  shellContainer,
  terminated,
} from './testing.ts';

let cluster: TestCluster;
let ns: string;

before(async () => {
  cluster = await useCluster('workloads');
  ns = await cluster.namespace();
});
after(() => cluster.cleanup());

async function waitLogged(pod: string, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!pattern.test(await cluster.podLogs(ns, pod).catch(() => ''))) {
    if (Date.now() > deadline) throw new Error(`pod ${pod} never logged ${pattern}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('jobs', () => {
  it('runs a job whose pod writes to a PVC to Succeeded, and the data is on the volume', async () => {
    const { kube } = cluster;
    await kube.create(claimsPath(ns), claimObject('data'));
    await kube.create(
      jobsPath(ns),
      jobObject('writer', {
        containers: [
          shellContainer('write', 'echo "written by $HOSTNAME" > /data/out.txt', {
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          }),
        ],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      }),
    );
    await jobCondition(kube, ns, 'writer', 'Complete');
    const claim = await kube.get(`${claimsPath(ns)}/data`);
    assert.equal(claim.status.phase, 'Bound');
    const pv = await kube.get(`/api/v1/persistentvolumes/${claim.spec.volumeName}`);
    const handle: string = pv.spec.csi.volumeHandle;
    const text = await readFile(join(statePaths().storage, 'volumes', handle, 'out.txt'), 'utf8');
    assert.match(text, /^written by writer-/);
    // WaitForFirstConsumer: the volume lives on the node the pod was scheduled to
    const pods = await kube.get(`${podsPath(ns)}?labelSelector=job-name=writer`);
    const node = pods.items[0].spec.nodeName;
    assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values, [node]);
  });

  it('retries a failing container and fails the job after backoffLimit', async () => {
    const { kube } = cluster;
    await kube.create(
      jobsPath(ns),
      jobObject('failing', { containers: [shellContainer('fail', 'echo attempt; exit 3')] }, { backoffLimit: 2 }),
    );
    const failed = await jobCondition(kube, ns, 'failing', 'Failed', 180_000);
    assert.equal(failed.reason, 'BackoffLimitExceeded');
    const pods = await kube.get(`${podsPath(ns)}?labelSelector=job-name=failing`);
    assert.equal(pods.items.length, 3);
    for (const pod of pods.items) {
      assert.equal(pod.status.phase, 'Failed');
      assert.equal(terminated(pod).exitCode, 3);
      assert.equal(terminated(pod).reason, 'Error');
    }
  });

  it('fires a CronJob', async () => {
    const { kube } = cluster;
    await kube.create(`/apis/batch/v1/namespaces/${ns}/cronjobs`, {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'tick' },
      spec: {
        schedule: '* * * * *',
        jobTemplate: {
          spec: {
            backoffLimit: 0,
            template: {
              spec: {
                restartPolicy: 'Never',
                containers: [shellContainer('tick', 'echo tick')],
              },
            },
          },
        },
      },
    });
    const job = await kube.waitFor(
      `${jobsPath(ns)}`,
      'a Job made by the CronJob',
      (list) => list.items.find((j: any) => j.metadata.ownerReferences?.[0]?.name === 'tick'),
      75_000,
    );
    await jobCondition(kube, ns, job.metadata.name, 'Complete');
  });
});

describe('pods', () => {
  it('reports a container over its memory limit as OOMKilled', async () => {
    const { kube } = cluster;
    await kube.create(
      podsPath(ns),
      podObject('hog', {
        containers: [
          {
            name: 'hog',
            image: ferryImage,
            command: ['node', '-e', 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))'],
            resources: { limits: { memory: '64Mi' } },
          },
        ],
      }),
    );
    const pod = await podFinished(kube, ns, 'hog');
    assert.equal(pod.status.phase, 'Failed');
    assert.equal(terminated(pod).reason, 'OOMKilled');
    assert.equal(terminated(pod).exitCode, 137);
  });

  it('fails a pod past activeDeadlineSeconds with DeadlineExceeded', async () => {
    const { kube } = cluster;
    await kube.create(
      podsPath(ns),
      podObject('slow', {
        activeDeadlineSeconds: 2,
        terminationGracePeriodSeconds: 1,
        containers: [shellContainer('slow', 'sleep 60')],
      }),
    );
    const pod = await podFinished(kube, ns, 'slow', 30_000);
    assert.equal(pod.status.phase, 'Failed');
    assert.equal(pod.status.reason, 'DeadlineExceeded');
  });

  it('sends SIGTERM on deletion, then SIGKILL after the grace period, and then removes the pod', async () => {
    const { kube } = cluster;
    const polite = 'trap "echo got TERM; exit 0" TERM; echo started; while true; do sleep 0.1; done';
    const stubborn = 'trap "echo ignoring TERM" TERM; echo started; while true; do sleep 0.1; done';
    for (const [name, script] of [
      ['polite', polite],
      ['stubborn', stubborn],
    ]) {
      await kube.create(
        podsPath(ns),
        podObject(name, { terminationGracePeriodSeconds: 2, containers: [shellContainer('main', script)] }),
      );
    }
    for (const name of ['polite', 'stubborn']) {
      await kube.waitFor(`${podsPath(ns)}/${name}`, `${name} to run`, (p) =>
        p.status?.phase === 'Running' ? true : undefined,
      );
      await waitLogged(name, /started/);
    }
    const t0 = Date.now();
    await Promise.all(['polite', 'stubborn'].map((n) => kube.delete(`${podsPath(ns)}/${n}`)));
    for (const name of ['polite', 'stubborn']) {
      await kube.waitFor(
        podsPath(ns),
        `${name} to be gone`,
        (list) => (list.items.some((p: any) => p.metadata.name === name) ? undefined : true),
        30_000,
      );
    }
    assert.ok(Date.now() - t0 >= 1500, 'the stubborn pod was kept until its grace period ran out');
    // the shell also reports its killed `sleep` on stderr, in either order with the trap's line
    assert.match(await cluster.podLogs(ns, 'polite'), /^started\n(Terminated\n)?got TERM\n/);
    assert.match(await cluster.podLogs(ns, 'stubborn'), /ignoring TERM/);
  });

  it('gives containers their env, downward API, secrets, config maps and files at the pod paths', async () => {
    const { kube } = cluster;
    await kube.create(`/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      stringData: { password: 's3cret', 'access-key': 'AK' },
    });
    await kube.create(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings' },
      data: { mode: 'fast', 'app.conf': 'level=3\n' },
    });
    const script = [
      'echo "POD=$POD_NAME NS=$POD_NS NODE=$NODE MEM=$MEM PASS=$PASSWORD MODE=$MODE GREETING=$GREETING"',
      'echo "SERVICE=$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"',
      'echo "conf=$(cat /etc/app/app.conf) secret=$(cat /etc/creds/access-key) labels=$(cat /etc/info/labels)"',
      'echo "sa-ns=$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace)"',
      'test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token-present',
      'grep -q "BEGIN CERTIFICATE" /var/run/secrets/kubernetes.io/serviceaccount/ca.crt && echo ca-present',
      'echo "init said $(cat /work/from-init)"',
      'echo "uid=$(id -u) gid=$(id -g) hostname=$(cat /proc/sys/kernel/hostname)"',
      'touch /etc/app/x 2>/dev/null && echo config-writable || echo config-read-only',
      'printf done > /dev/termination-log',
    ].join('\n');
    await kube.create(
      podsPath(ns),
      podObject(
        'env',
        {
          securityContext: { runAsUser: 1000, runAsGroup: 3000 },
          initContainers: [
            shellContainer('prepare', 'echo hello > /work/from-init', {
              volumeMounts: [{ name: 'work', mountPath: '/work' }],
            }),
          ],
          containers: [
            shellContainer('main', script, {
              env: [
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
                { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
                { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
                { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } },
                { name: 'GREETING', value: 'hi $(POD_NAME)' },
              ],
              resources: { limits: { memory: '100Mi' } },
              volumeMounts: [
                { name: 'work', mountPath: '/work' },
                { name: 'config', mountPath: '/etc/app' },
                { name: 'creds', mountPath: '/etc/creds' },
                { name: 'info', mountPath: '/etc/info' },
              ],
            }),
          ],
          volumes: [
            { name: 'work', emptyDir: {} },
            { name: 'config', configMap: { name: 'settings' } },
            { name: 'creds', secret: { secretName: 'creds' } },
            { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          ],
        },
        { labels: { app: 'probe' } },
      ),
    );
    const pod = await podFinished(kube, ns, 'env');
    const logs = await cluster.podLogs(ns, 'env', { container: 'main' });
    assert.equal(pod.status.phase, 'Succeeded', logs);
    assert.match(logs, new RegExp(`POD=env NS=${ns} NODE=node-\\d MEM=100 PASS=s3cret MODE=fast GREETING=hi env\\n`));
    // in-cluster clients find the apiserver through the kubernetes Service, as kube-proxy routes it
    const service = await cluster.kube.get('/api/v1/namespaces/default/services/kubernetes');
    assert.ok(logs.includes(`SERVICE=${service.spec.clusterIP}:${service.spec.ports[0].port}\n`), logs);
    assert.match(logs, /conf=level=3 secret=AK labels=app="probe"\n/);
    assert.match(logs, new RegExp(`sa-ns=${ns}\\ntoken-present\\nca-present\\n`));
    assert.match(logs, /init said hello\n/);
    assert.match(logs, /uid=1000 gid=3000 hostname=env\n/);
    assert.match(logs, /config-read-only\n/);
    assert.equal(terminated(pod, 'main').message, 'done');
    assert.equal(pod.status.initContainerStatuses[0].state.terminated.reason, 'Completed');
    assert.deepEqual(pod.status.conditions.find((c: any) => c.type === 'Initialized').status, 'True');
  });

  it('restarts a failing container under restartPolicy OnFailure and keeps the previous run', async () => {
    const { kube } = cluster;
    const script = 'n=$(cat /state/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /state/n; echo run $n; [ $n -ge 3 ]';
    await kube.create(
      podsPath(ns),
      podObject('flaky', {
        restartPolicy: 'OnFailure',
        containers: [shellContainer('main', script, { volumeMounts: [{ name: 'state', mountPath: '/state' }] })],
        volumes: [{ name: 'state', emptyDir: {} }],
      }),
    );
    const pod = await podFinished(kube, ns, 'flaky');
    const status = pod.status.containerStatuses[0];
    assert.equal(pod.status.phase, 'Succeeded');
    assert.equal(status.restartCount, 2);
    assert.equal(status.lastState.terminated.exitCode, 1);
    assert.equal(await cluster.podLogs(ns, 'flaky'), 'run 3\n');
    assert.equal(await cluster.podLogs(ns, 'flaky', { previous: true }), 'run 2\n');
  });

  it('serves container logs through the apiserver (kubectl logs)', async () => {
    const { kube } = cluster;
    await kube.create(
      podsPath(ns),
      podObject('talker', { containers: [shellContainer('talk', 'echo one; echo two; echo three')] }),
    );
    await podFinished(kube, ns, 'talker');
    const res = await kube.request('GET', `${podsPath(ns)}/talker/log`);
    assert.equal(res.text, 'one\ntwo\nthree\n');
    const tail = await kube.request('GET', `${podsPath(ns)}/talker/log?tailLines=1`);
    assert.equal(tail.text, 'three\n');
  });
});
