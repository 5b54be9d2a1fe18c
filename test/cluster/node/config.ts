// The files and flags of a real node: its containerd (own root, state, socket; a locally built pause image as
// sandbox; runc; CNI bridge), its kubelet (KubeletConfiguration as measured on this kind of machine: cgroupfs on a
// cgroup v1 hybrid, an own cgroupRoot, its own ports) and the box's one kube-proxy (every node shares the host's
// network namespace, so one set of Service rules serves them all).

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DaemonSpec } from '../daemons.ts';

/** registry.k8s.io/pause:3.10 is what containerd asks for as the sandbox image; the box builds it (images.ts). */
export const pauseImage = 'registry.k8s.io/pause:3.10';
const podNetwork = '10.244.0.0/16';
const cniPlugins = '/usr/lib/cni';
/** the discard port on loopback: nothing listens, so every registry request is refused */
const noRegistry = 'http://127.0.0.1:9';

export interface NodeLayout {
  name: string;
  /** 1-based */
  index: number;
  dir: string;
  socket: string;
  /** the kubelet's port on the host address (its daemonEndpoint: logs, exec) */
  port: number;
  bridge: string;
  subnet: string;
  /** the kubelet's cgroupRoot, below every hierarchy's root */
  cgroupRoot: string;
}

export function nodeLayout(nodesDir: string, name: string, index: number, port: number): NodeLayout {
  const dir = join(nodesDir, name);
  return {
    name,
    index,
    dir,
    socket: join(dir, 'containerd', 'containerd.sock'),
    port,
    bridge: `ferrybox${index}`,
    subnet: `10.244.${index}.0/24`,
    cgroupRoot: `/ferrybox-${name}`,
  };
}

function containerdConfig(n: NodeLayout): string {
  const d = (p: string): string => JSON.stringify(join(n.dir, p));
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = ${d('containerd/root')}
state = ${d('containerd/state')}
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = ${JSON.stringify(n.socket)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${d('containerd/opt')}

[${cri}]
  sandbox_image = "${pauseImage}"
  # without it every sandbox fails "can't get final child's PID from pipe: EOF" (no CAP_SYS_RESOURCE here)
  restrict_oom_score_adj = true
  # network namespaces under this containerd's state, not the host's /var/run/netns
  netns_mounts_under_state_dir = true
  # a free port each: the default 10010 would collide between nodes
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false

[${cri}.cni]
  bin_dir = "${cniPlugins}"
  conf_dir = ${d('cni/net.d')}
  max_conf_num = 1

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  BinaryName = "/usr/sbin/runc"
  Root = ${d('runc')}
  SystemdCgroup = false
`;
}

function cniConfig(n: NodeLayout): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: `ferrybox-${n.name}`,
      plugins: [
        {
          // the bridge's address is the pods' gateway; the host routes between the nodes' bridges
          type: 'bridge',
          bridge: n.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: n.subnet }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: join(n.dir, 'cni', 'ipam'),
          },
        },
      ],
    },
    null,
    2,
  );
}

function kubeletConfig(n: NodeLayout, pki: string): string {
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: join(pki, 'ca.crt') },
      },
      authorization: { mode: 'Webhook' },
      tlsCertFile: join(pki, `${n.name}-serving.crt`),
      tlsPrivateKeyFile: join(pki, `${n.name}-serving.key`),
      port: n.port,
      readOnlyPort: 0,
      healthzPort: 0,
      containerRuntimeEndpoint: `unix://${n.socket}`,
      // this machine: cgroup v1 hybrid, no systemd, swap allowed
      cgroupDriver: 'cgroupfs',
      failCgroupV1: false,
      cgroupRoot: n.cgroupRoot,
      failSwapOn: false,
      oomScoreAdj: 0,
      podLogsDir: join(n.dir, 'pod-logs'),
      volumePluginDir: join(n.dir, 'volume-plugins'),
      clusterDomain: 'cluster.local',
      resolvConf: '/etc/resolv.conf',
      // a shared test machine's disk and memory are not the box's to guard; images are imported, never pulled again
      evictionHard: {
        'memory.available': '1Mi',
        'nodefs.available': '1%',
        'imagefs.available': '1%',
        'nodefs.inodesFree': '1%',
      },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      maxPods: 110,
      serializeImagePulls: false,
    },
    null,
    2,
  );
}

/** Writes the node's configuration files; returns its containerd's and kubelet's processes. */
export async function nodeDaemons(
  n: NodeLayout,
  bin: { kubelet: string },
  pki: string,
  hostIP: string,
): Promise<{ containerd: DaemonSpec; kubelet: DaemonSpec }> {
  for (const sub of ['containerd', 'cni/net.d', 'cni/ipam', 'kubelet', 'pod-logs', 'volume-plugins', 'runc']) {
    await mkdir(join(n.dir, sub), { recursive: true });
  }
  await writeFile(join(n.dir, 'containerd', 'config.toml'), containerdConfig(n));
  await writeFile(join(n.dir, 'cni', 'net.d', '10-bridge.conflist'), cniConfig(n));
  await writeFile(join(n.dir, 'kubelet.yaml'), kubeletConfig(n, pki));
  return {
    containerd: {
      name: `containerd-${n.name}`,
      binary: '/usr/bin/containerd',
      args: ['--config', join(n.dir, 'containerd', 'config.toml')],
      // images come by import only: a pull (an image not imported, or imagePullPolicy Always) fails at once
      // instead of fetching from a registry this machine may reach
      env: { HTTPS_PROXY: noRegistry, HTTP_PROXY: noRegistry, NO_PROXY: '' },
    },
    kubelet: {
      name: `kubelet-${n.name}`,
      binary: bin.kubelet,
      args: [
        `--config=${join(n.dir, 'kubelet.yaml')}`,
        `--kubeconfig=${join(pki, `${n.name}.kubeconfig`)}`,
        `--root-dir=${join(n.dir, 'kubelet')}`,
        `--hostname-override=${n.name}`,
        `--node-ip=${hostIP}`,
        '--v=1',
      ],
    },
  };
}

/** kube-proxy in iptables mode, conntrack sysctls left as they are, healthz and metrics on free loopback ports. */
export async function kubeProxyDaemon(
  dir: string,
  binary: string,
  pki: string,
  node: string,
  hostIP: string,
  ports: { healthz: number; metrics: number },
): Promise<DaemonSpec> {
  const config = join(dir, 'kube-proxy.yaml');
  await writeFile(
    config,
    JSON.stringify(
      {
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clientConnection: { kubeconfig: join(pki, 'kube-proxy.kubeconfig') },
        mode: 'iptables',
        clusterCIDR: podNetwork,
        hostnameOverride: node,
        bindAddress: hostIP,
        healthzBindAddress: `127.0.0.1:${ports.healthz}`,
        metricsBindAddress: `127.0.0.1:${ports.metrics}`,
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
        // NodePorts on 127.0.0.1 would need route_localnet; the box's tests do not use NodePorts
        iptables: { localhostNodePorts: false },
      },
      null,
      2,
    ),
  );
  return { name: 'kube-proxy', binary, args: [`--config=${config}`, '--v=1'] };
}
