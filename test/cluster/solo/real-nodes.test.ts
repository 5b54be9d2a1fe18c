// The box's real nodes: kubelets with containerd run ferry's image, Services reach pods across nodes through
// kube-proxy, the runtime enforces a securityContext, the apiserver reaches the dispatcher through its Service as in
// a real cluster, and `down` leaves the host as the box found it. This file starts its own box (it stops a running
// one first, to see the host before) and stops it at the end, so `npm test` runs it alone, after every other suite.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { down, readRecord } from '../box.ts';
import type { KubeObject } from '../kube.ts';
import { readRules, readSysctls } from '../node/host.ts';
import { statePaths } from '../paths.ts';
import {
  busybox,
  claimObject,
  claimsPath,
  ferryImage,
  podFinished,
  podObject,
  podsPath,
  shellContainer,
} from '../testing.ts';
import { useCluster, useSecondSite } from '../../support/cluster.ts';
import type { TestCluster } from '../../support/cluster.ts';
import { ferryOK } from '../../support/ferry-cli.ts';
import { makeTestCertificates } from '../../support/test-ca.ts';

const run = promisify(execFile);

/** What real nodes could leave behind on the host, in comparable form. */
async function hostState(): Promise<Record<string, unknown>> {
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter(Boolean)
    .sort();
  const links = (await run('ip', ['-o', 'link', 'show'])).stdout
    .split('\n')
    .map((l) => l.split(': ')[1]?.split('@')[0])
    .filter(Boolean)
    .sort();
  const nodesDir = statePaths().nodes;
  const processes: string[] = [];
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const argv = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (argv.includes(nodesDir)) processes.push(argv.replace(/\0/g, ' '));
  }
  const cgroups = (await readdir('/sys/fs/cgroup/memory')).filter((n) => n.startsWith('ferrybox-')).sort();
  const netns = (await readdir('/var/run/netns').catch(() => [])).sort();
  // every loop device: the kubelet's own, stacked on a block volume's, shows "/" as its backing file
  const loops = (await run('losetup', ['--list', '--noheadings', '--output', 'BACK-FILE'])).stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();
  const logLinks = (await readdir('/var/log/containers').catch(() => [])).sort();
  const rules = Object.fromEntries(
    Object.entries(await readRules()).map(([table, lines]) => [
      table,
      lines.filter((l) => /KUBE-|CNI-|kube|cni/i.test(l)).sort(),
    ]),
  );
  const dirs: Record<string, boolean> = {};
  for (const path of [
    '/var/lib/kubelet',
    '/var/lib/cni',
    '/var/log/containers',
    '/var/log/pods',
    '/run/containerd',
    '/var/lib/containerd',
    '/etc/kubernetes',
    '/run/ferrybox-real-nodes',
  ]) {
    dirs[path] = await access(path).then(
      () => true,
      () => false,
    );
  }
  return { mounts, links, processes, cgroups, netns, loops, logLinks, rules, dirs, sysctls: await readSysctls() };
}

let before_: Record<string, unknown>;
let cluster: TestCluster;
let ns: string;

before(async () => {
  await down();
  before_ = await hostState();
  cluster = await useCluster('real-nodes');
  ns = await cluster.namespace();
});
after(() => cluster.cleanup());

async function finishedPod(name: string, spec: KubeObject): Promise<KubeObject> {
  await cluster.kube.create(podsPath(ns), podObject(name, spec));
  return podFinished(cluster.kube, ns, name, 180_000);
}

async function logOf(name: string): Promise<string> {
  return (await cluster.kube.request('GET', `${podsPath(ns)}/${name}/log`)).text as string;
}

describe('real nodes', () => {
  it("runs a pod of ferry's image on each node, its log read through the apiserver from the kubelet", async () => {
    const { version } = JSON.parse(
      await readFile(join(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8'),
    ) as {
      version: string;
    };
    for (const node of cluster.nodes) {
      const pod = await finishedPod(`version-${node}`, {
        nodeName: node,
        containers: [{ name: 'ferry', image: ferryImage, command: ['ferry', '--version'] }],
      });
      assert.equal(pod.status.phase, 'Succeeded', JSON.stringify(pod.status));
      assert.equal(pod.spec.nodeName, node);
      // a real runtime: the image's digest, a pod IP of the node's own bridge subnet
      assert.match(pod.status.containerStatuses[0].imageID, /sha256:[0-9a-f]{64}/);
      assert.match(pod.status.podIP, new RegExp(`^10\\.244\\.${cluster.nodes.indexOf(node) + 1}\\.`));
      assert.match(await logOf(`version-${node}`), new RegExp(version.replace(/\./g, '\\.')));
      // and as the tests' helper reads it, also once the kubelet has deleted the pod and its log files
      const text = await logOf(`version-${node}`);
      await cluster.kube.delete(`${podsPath(ns)}/version-${node}`);
      await cluster.kube.waitFor(
        podsPath(ns),
        `pod version-${node} to be gone`,
        (list) => (list.items.some((p: KubeObject) => p.metadata.name === `version-${node}`) ? undefined : true),
        60_000,
      );
      assert.equal(await cluster.podLogs(ns, `version-${node}`), text);
    }
  });

  it('never pulls: an image that was not imported fails to pull, at once', async () => {
    await cluster.kube.create(
      podsPath(ns),
      podObject('pull', { containers: [{ name: 'c', image: 'docker.io/library/alpine:3.20', command: ['true'] }] }),
    );
    const waiting = await cluster.kube.waitFor(
      `${podsPath(ns)}/pull`,
      'the pull to fail',
      (p) => {
        const w = p.status?.containerStatuses?.[0]?.state?.waiting;
        return w?.reason === 'ErrImagePull' ? w : undefined;
      },
      120_000,
    );
    assert.match(waiting.message ?? '', /127\.0\.0\.1:9|proxyconnect/);
  });

  it("routes a Service's ClusterIP to a pod on the other node (kube-proxy, bridges, host routes)", async () => {
    const [client, server] = cluster.nodes;
    const serve = "require('node:http').createServer((q, r) => r.end('served on ' + process.env.NODE)).listen(8080)";
    await cluster.kube.create(
      podsPath(ns),
      podObject(
        'web',
        {
          nodeName: server,
          restartPolicy: 'Always',
          containers: [
            {
              name: 'web',
              image: ferryImage,
              command: ['node', '-e', serve],
              env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
        { labels: { app: 'web' } },
      ),
    );
    const service = await cluster.kube.create(`/api/v1/namespaces/${ns}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    await cluster.kube.waitFor(
      `${podsPath(ns)}/web`,
      'pod web to be Ready',
      (p) =>
        (p.status?.conditions ?? []).some((c: KubeObject) => c.type === 'Ready' && c.status === 'True')
          ? true
          : undefined,
      180_000,
    );
    // A Ready pod is not yet a routed endpoint: the EndpointSlice and then kube-proxy's next sync follow it, and until
    // then the ClusterIP's rule rejects. The client retries for 30 s, as any caller of a new Service must.
    const fetchIt =
      `const get = (left) => fetch('http://${service.spec.clusterIP}/').then((r) => r.text()).then(console.log, (e) => ` +
      `left > 0 ? new Promise((ok) => setTimeout(ok, 1000)).then(() => get(left - 1)) : (console.error(e), process.exit(1))); get(30)`;
    const pod = await finishedPod('client', {
      nodeName: client,
      containers: [{ name: 'client', image: ferryImage, command: ['node', '-e', fetchIt] }],
    });
    assert.equal(pod.status.phase, 'Succeeded', await logOf('client'));
    assert.equal((await logOf('client')).trim(), `served on ${server}`);
  });

  it('enforces a securityContext: read-only root, runAsNonRoot, dropped capabilities', async () => {
    const probe =
      'touch /probe 2>/dev/null && echo root-writable || echo root-read-only; id -u; grep CapEff /proc/self/status; ' +
      'touch /tmp/f; chown 1:1 /tmp/f 2>/dev/null && echo chown-allowed || echo chown-refused';
    const pod = (name: string, securityContext: KubeObject): KubeObject => ({
      containers: [
        {
          name,
          image: busybox,
          command: ['sh', '-c', probe],
          securityContext,
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    });
    await finishedPod(
      'restricted',
      pod('restricted', {
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        runAsUser: 65532,
        capabilities: { drop: ['ALL'] },
        allowPrivilegeEscalation: false,
      }),
    );
    const restricted = await logOf('restricted');
    assert.match(restricted, /root-read-only\n65532\nCapEff:\s+0{16}\n/);
    await finishedPod('root-no-chown', pod('root-no-chown', { capabilities: { drop: ['CHOWN'] } }));
    await finishedPod('root', pod('root', {}));
    // the same root container may chown with the runtime's default capabilities, and not without CHOWN
    assert.match(await logOf('root'), /root-writable\n0\n[\s\S]*chown-allowed/);
    assert.match(await logOf('root-no-chown'), /chown-refused/);
    // the image runs as root, so runAsNonRoot without a user is refused by the kubelet before the container starts
    await cluster.kube.create(
      podsPath(ns),
      podObject('non-root', {
        containers: [{ name: 'c', image: busybox, command: ['true'], securityContext: { runAsNonRoot: true } }],
      }),
    );
    const waiting = await cluster.kube.waitFor(
      `${podsPath(ns)}/non-root`,
      'the kubelet to refuse non-root',
      (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.message,
      120_000,
    );
    assert.match(waiting, /runAsNonRoot and image will run as root/);
  });

  it("lets the apiserver call the dispatcher through its Service (ferry install, ferry's image on the nodes)", async () => {
    const kubeconfig = ['--kubeconfig', cluster.kubeconfig];
    await ferryOK(['install', ...kubeconfig]);
    const dir = join(statePaths().root, 'real-nodes-tls');
    await mkdir(dir, { recursive: true });
    const certs = await makeTestCertificates(dir, 'tls.crt', 'tls.key', ['ferry-dispatcher.ferry-system.svc']);
    const [crt, key, ca] = await Promise.all(
      [certs.certFile, certs.keyFile, certs.caFile].map((f) => readFile(f, 'utf8')),
    );
    await cluster.kube.create('/api/v1/namespaces/ferry-system/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'ferry-dispatcher-tls' },
      stringData: { 'tls.crt': crt, 'tls.key': key },
    });
    const hooks = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
    const config = (await cluster.kube.get(`${hooks}?labelSelector=app.kubernetes.io%2Fname%3Dferry`)).items[0];
    for (const hook of config.webhooks) {
      assert.ok(hook.clientConfig.service && !hook.clientConfig.url, 'the webhook is registered through its Service');
      hook.clientConfig.caBundle = Buffer.from(ca).toString('base64');
    }
    await cluster.kube.request('PUT', `${hooks}/${config.metadata.name}`, config);
    await cluster.kube.waitFor(
      '/apis/apps/v1/namespaces/ferry-system/deployments/ferry-dispatcher',
      'the dispatcher to be available',
      (d) => (d.status?.availableReplicas >= 1 ? true : undefined),
      240_000,
    );
    // the apiserver picks up the new caBundle, and kube-proxy the new endpoint, within moments: until then the call fails
    let refused = '';
    for (const deadline = Date.now() + 60_000; !/denied/.test(refused) && Date.now() < deadline;) {
      if (refused) await new Promise((r) => setTimeout(r, 1000));
      refused = await cluster.kube
        .create(`/apis/ferry.dev/v1alpha1/namespaces/${ns}/datauploads`, {
          apiVersion: 'ferry.dev/v1alpha1',
          kind: 'DataUpload',
          metadata: { name: `du-${randomBytes(3).toString('hex')}` },
          spec: { sourcePVC: 'data', backupStorageLocation: 'nowhere' },
        })
        .then(
          () => 'accepted',
          (err: Error) => err.message,
        );
      if (refused === 'accepted') break;
    }
    assert.match(refused, /admission webhook "dispatcher\.ferry\.dev" denied/);
  });

  it('`down` leaves no process, mount, loop device, bridge, cgroup, iptables rule or changed sysctl behind', async (t) => {
    // a pod holding a block volume (a loop device the CSI driver attached) and a filesystem volume (a bind mount)
    await cluster.kube.create(claimsPath(ns), claimObject('disk', { volumeMode: 'Block' }));
    await cluster.kube.create(claimsPath(ns), claimObject('files'));
    await cluster.kube.create(
      podsPath(ns),
      podObject('holder', {
        containers: [
          shellContainer('main', 'sleep 3600', {
            volumeDevices: [{ name: 'disk', devicePath: '/dev/xvda' }],
            volumeMounts: [{ name: 'files', mountPath: '/data' }],
          }),
        ],
        volumes: [
          { name: 'disk', persistentVolumeClaim: { claimName: 'disk' } },
          { name: 'files', persistentVolumeClaim: { claimName: 'files' } },
        ],
      }),
    );
    await cluster.kube.waitFor(
      `${podsPath(ns)}/holder`,
      'the volume holder to run',
      (p) => (p.status?.phase === 'Running' ? true : undefined),
      180_000,
    );
    // the second site's node holds a volume too, so `down` has its bridge, rule, mounts and cgroups to put back
    const second = await useSecondSite();
    await second.kube.create(claimsPath('default'), claimObject('files'));
    await second.kube.create(
      podsPath('default'),
      podObject('holder', {
        containers: [shellContainer('main', 'sleep 3600', { volumeMounts: [{ name: 'files', mountPath: '/data' }] })],
        volumes: [{ name: 'files', persistentVolumeClaim: { claimName: 'files' } }],
      }),
    );
    await second.kube.waitFor(
      `${podsPath('default')}/holder`,
      "the second site's volume holder to run",
      (p) => (p.status?.phase === 'Running' ? true : undefined),
      180_000,
    );
    second.close();
    const record = await readRecord();
    assert.ok(record?.realNodes, 'the box ran real nodes');
    t.diagnostic(`start timings (s): ${JSON.stringify(record.timings)}`);
    // what the comparison below would catch: the running nodes changed the host
    const during = (await hostState()) as {
      links: string[];
      rules: Record<string, string[]>;
      processes: string[];
      mounts: string[];
      loops: string[];
    };
    assert.ok(
      ['ferrybox1', 'ferrybox2', 'ferrybox3'].every((l) => during.links.includes(l)),
      during.links.join(' '),
    );
    assert.ok(
      during.rules['iptables:nat'].some((r) => r.startsWith(':KUBE-FERRYBOX-SECOND-SITE')),
      'the second site',
    );
    assert.ok(
      during.rules['iptables:nat'].some((r) => r.startsWith(':KUBE-SERVICES')),
      'kube-proxy wrote its chains',
    );
    assert.ok(during.processes.length >= 5 && during.mounts.length > (before_.mounts as string[]).length);
    // the CSI driver's loop device of the volume's image, and the kubelet's own on the device file it maps
    assert.ok(
      during.loops.some((l) => l.startsWith(statePaths().root)),
      `the block volume is attached: ${during.loops.join(' ')}`,
    );
    await cluster.cleanup();
    const stopping = performance.now();
    await down();
    t.diagnostic(`down: ${((performance.now() - stopping) / 1000).toFixed(1)} s`);
    assert.deepEqual(await hostState(), before_);
  });
});
