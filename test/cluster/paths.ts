// Where the cluster in a box keeps things: binaries in the build cache outside the checkout (shared by every clone
// on the machine), runtime state in the checkout's git-ignored test/cluster/.state/.

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Go module that builds the control plane and the box's own programs. */
export const moduleDir = resolve(fileURLToPath(new URL('.', import.meta.url)));
export const checkoutDir = resolve(moduleDir, '..', '..');

export interface StatePaths {
  root: string;
  /** cluster.json: ports, process ids, versions of the running box */
  record: string;
  /** admin kubeconfig, what `npm run cluster -- env` exports */
  kubeconfig: string;
  pki: string;
  etcd: string;
  logs: string;
  minio: string;
  /** each node's containerd, CNI and kubelet state, and the container logs kept for tests */
  nodes: string;
  /** volumes and snapshots of the storage driver */
  storage: string;
  /** held while a process starts or stops the box */
  lock: string;
}

export function statePaths(root = process.env.FERRYBOX_STATE || join(moduleDir, '.state')): StatePaths {
  return {
    root,
    record: join(root, 'cluster.json'),
    kubeconfig: join(root, 'pki', 'admin.kubeconfig'),
    pki: join(root, 'pki'),
    etcd: join(root, 'etcd'),
    logs: join(root, 'logs'),
    minio: join(root, 'minio'),
    nodes: join(root, 'nodes'),
    storage: join(root, 'storage'),
    lock: join(root, 'lock'),
  };
}

export function cacheRoot(): string {
  return process.env.FERRY_CACHE || join(homedir(), '.cache', 'ferry');
}

/** The ferry image's entry points run with this Node, as in the image. */
export const nodeBinary = join(checkoutDir, 'node_modules', '.bin', 'node');
