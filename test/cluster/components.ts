// The box's control-plane processes and their flags, in start order. Flags are data here so what the box runs is
// visible in one place: a real control plane (RBAC, admission webhooks and policies, service-account tokens), real
// controllers, MinIO, and the box's CSI driver with its sidecars. The nodes' own processes are in node/.

import { join } from 'node:path';
import type { Binaries } from './build.ts';
import type { DaemonSpec } from './daemons.ts';
import type { StatePaths } from './paths.ts';
import type { Ports } from './ports.ts';

export interface BoxSettings {
  nodes: number;
  /** how long a new VolumeSnapshot stays not readyToUse (Go duration, e.g. "2s") */
  snapshotReadyDelay: string;
  s3: { accessKey: string; secretKey: string };
}

export const serviceAccountIssuer = 'https://kubernetes.default.svc.cluster.local';

export function etcdSpec(b: Binaries, s: StatePaths, p: Ports): DaemonSpec {
  const client = `http://127.0.0.1:${p.etcd}`;
  const peer = `http://127.0.0.1:${p.etcdPeer}`;
  return {
    name: 'etcd',
    binary: b.bin.etcd,
    args: [
      '--name=box',
      `--data-dir=${s.etcd}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=box=${peer}`,
      // test data: durability across power loss is not worth the fsync latency
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
  };
}

/** The Service range of a control plane: the second site's differs, so the host can route each site's `kubernetes`
 * Service to its own apiserver. */
export const serviceRanges = { primary: '10.0.0.0/24', second: '10.0.1.0/24' } as const;

/**
 * hostIP: pods reach the apiserver through the kubernetes Service, whose endpoint is that address. The second site
 * runs no kube-proxy (the host has one set of Service rules, the first site's), so its apiserver calls webhooks at
 * their endpoints (aggregator routing) instead of their Service's address.
 */
export function apiserverSpec(
  b: Binaries,
  s: StatePaths,
  p: Ports,
  hostIP: string,
  site: keyof typeof serviceRanges = 'primary',
): DaemonSpec {
  const pki = (f: string): string => join(s.pki, f);
  return {
    name: 'kube-apiserver',
    binary: b.bin['kube-apiserver'],
    args: [
      `--etcd-servers=http://127.0.0.1:${p.etcd}`,
      // pods reach it at the host's address; the tests and the box's own components at 127.0.0.1
      '--bind-address=0.0.0.0',
      `--advertise-address=${hostIP}`,
      `--secure-port=${p.apiserver}`,
      `--tls-cert-file=${pki('apiserver.crt')}`,
      `--tls-private-key-file=${pki('apiserver.key')}`,
      `--client-ca-file=${pki('ca.crt')}`,
      '--authorization-mode=Node,RBAC',
      // the defaults already hold most plugins a real cluster runs; these are named so a regression is loud
      '--enable-admission-plugins=NodeRestriction,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy',
      // the apiserver presents a client certificate (pki/webhook-client/, from a CA of its own) to every admission
      // webhook, as an operator sets it up for webhooks that serve only the apiserver (ferry's dispatcher does)
      `--admission-control-config-file=${pki('admission.yaml')}`,
      `--service-account-issuer=${serviceAccountIssuer}`,
      `--service-account-key-file=${pki('sa.pub')}`,
      `--service-account-signing-key-file=${pki('sa.key')}`,
      `--service-cluster-ip-range=${serviceRanges[site]}`,
      ...(site === 'second' ? ['--enable-aggregator-routing=true'] : []),
      '--allow-privileged=true',
      `--kubelet-client-certificate=${pki('apiserver-kubelet-client.crt')}`,
      `--kubelet-client-key=${pki('apiserver-kubelet-client.key')}`,
      `--kubelet-certificate-authority=${pki('ca.crt')}`,
      '--kubelet-preferred-address-types=InternalIP',
      '--profiling=false',
      '--v=1',
    ],
  };
}

function controlPlaneClient(s: StatePaths, identity: string, port: number): string[] {
  const kubeconfig = join(s.pki, `${identity}.kubeconfig`);
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--leader-elect=false',
    '--v=1',
  ];
}

export function controllerManagerSpec(b: Binaries, s: StatePaths, p: Ports): DaemonSpec {
  const pki = (f: string): string => join(s.pki, f);
  return {
    name: 'kube-controller-manager',
    binary: b.bin['kube-controller-manager'],
    args: [
      ...controlPlaneClient(s, 'controller-manager', p.controllerManager),
      // every default controller: job, cronjob, ttl-after-finished, garbage collector, namespace, serviceaccount,
      // persistentvolume-binder, pv/pvc-protection, pod-gc, node lifecycle, ephemeral volumes, ...
      '--controllers=*',
      '--use-service-account-credentials=true',
      `--root-ca-file=${pki('ca.crt')}`,
      `--service-account-private-key-file=${pki('sa.key')}`,
      `--cluster-signing-cert-file=${pki('ca.crt')}`,
      `--cluster-signing-key-file=${pki('ca.key')}`,
    ],
  };
}

export function schedulerSpec(b: Binaries, s: StatePaths, p: Ports): DaemonSpec {
  return {
    name: 'kube-scheduler',
    binary: b.bin['kube-scheduler'],
    args: controlPlaneClient(s, 'scheduler', p.scheduler),
  };
}

export function minioSpec(b: Binaries, s: StatePaths, p: Ports, settings: BoxSettings, hostIP: string): DaemonSpec {
  return {
    name: 'minio',
    binary: b.minio,
    args: [
      'server',
      '--quiet',
      `--address=${hostIP}:${p.minio}`,
      `--console-address=127.0.0.1:${p.minioConsole}`,
      `--certs-dir=${join(s.minio, 'certs')}`,
      join(s.minio, 'data'),
    ],
    env: {
      HOME: s.minio,
      MINIO_ROOT_USER: settings.s3.accessKey,
      MINIO_ROOT_PASSWORD: settings.s3.secretKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
      // tests read the bytes MinIO received from its metrics, as an operator's Prometheus would
      MINIO_PROMETHEUS_AUTH_TYPE: 'public',
    },
  };
}

export function snapshotControllerSpec(b: Binaries, s: StatePaths): DaemonSpec {
  return {
    name: 'snapshot-controller',
    binary: b.bin['snapshot-controller'],
    args: [
      `--kubeconfig=${join(s.pki, 'snapshot-controller.kubeconfig')}`,
      '--leader-election=false',
      // a test waits seconds, not the default 5 minutes, for a retried snapshot
      '--retry-interval-max=5s',
      '--resync-period=1m',
      '--v=2',
    ],
  };
}

export const csiDriverName = 'local.csi.ferry.dev';

/** The box's CSI driver serving its Controller, GroupController and SnapshotMetadata services, with the sidecars a
 * driver's controller Deployment runs beside it; they share one identity, ferrybox:storage-driver. The sidecars wait
 * for the driver's socket, so the start order within the list does not matter. */
export function csiControllerSpecs(b: Binaries, s: StatePaths, p: Ports, settings: BoxSettings): DaemonSpec[] {
  const socket = join(s.storage, 'controller.sock');
  const kubeconfig = `--kubeconfig=${join(s.pki, 'storage-driver.kubeconfig')}`;
  // a test waits seconds, not the sidecars' default 5 minutes, for a retried operation
  const sidecar = [`--csi-address=${socket}`, kubeconfig, '--leader-election=false', '--retry-interval-max=5s'];
  return [
    {
      name: 'csi-controller',
      binary: b.ferryCsi,
      args: [
        '--controller',
        `--endpoint=unix://${socket}`,
        `--storage-root=${s.storage}`,
        `--snapshot-ready-delay=${settings.snapshotReadyDelay}`,
      ],
    },
    { name: 'csi-provisioner', binary: b.sidecars['csi-provisioner'], args: [...sidecar, '--timeout=60s'] },
    { name: 'csi-snapshotter', binary: b.bin['csi-snapshotter'], args: sidecar },
    {
      // serves SnapshotMetadata (allocated and changed blocks) to clients that present a ServiceAccount token for
      // its audience, over TLS on the host's address (the SnapshotMetadataService object tells clients where)
      name: 'csi-snapshot-metadata',
      binary: b.sidecars['csi-snapshot-metadata'],
      args: [
        `--csi-address=${socket}`,
        kubeconfig,
        `--port=${p.snapshotMetadata}`,
        `--tls-cert=${join(s.pki, 'snapshot-metadata.crt')}`,
        `--tls-key=${join(s.pki, 'snapshot-metadata.key')}`,
        `--audience=${snapshotMetadataAudience}`,
      ],
    },
  ];
}

export const snapshotMetadataAudience = 'ferrybox-snapshot-metadata';

/** The SnapshotMetadataService object by which clients find the driver's sidecar: its address, CA and audience. */
export function snapshotMetadataService(hostIP: string, p: Ports, caPem: string): object {
  return {
    apiVersion: 'cbt.storage.k8s.io/v1alpha1',
    kind: 'SnapshotMetadataService',
    metadata: { name: csiDriverName },
    spec: {
      address: `${hostIP}:${p.snapshotMetadata}`,
      caCert: Buffer.from(caPem).toString('base64'),
      audience: snapshotMetadataAudience,
    },
  };
}

/** The driver's Node service for one kubelet, registered through its plugin registration folder as a driver's
 * DaemonSet registers it; the kubelet then mounts every volume of its pods through it. */
export function csiNodeSpec(ferryCsi: string, storageRoot: string, node: string, kubeletRoot: string): DaemonSpec {
  // the driver binds its registration socket there; past Linux's 107 bytes for a unix socket path it could not, and
  // the kubelet would never learn of it (every volume on the node Pending, no event saying why)
  const socket = join(kubeletRoot, 'plugins_registry', `${csiDriverName}-reg.sock`);
  if (Buffer.byteLength(socket) > 107)
    throw new Error(
      `The CSI registration socket ${socket} is ${Buffer.byteLength(socket)} bytes, past the 107 a unix socket path may have: use a checkout at a shorter path (or FERRYBOX_STATE).`,
    );
  return {
    name: `csi-node-${node}`,
    binary: ferryCsi,
    args: [
      `--node-id=${node}`,
      `--endpoint=unix://${join(kubeletRoot, 'plugins', csiDriverName, 'csi.sock')}`,
      `--storage-root=${storageRoot}`,
      `--registration-dir=${join(kubeletRoot, 'plugins_registry')}`,
    ],
  };
}
