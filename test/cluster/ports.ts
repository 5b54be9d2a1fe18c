// Free loopback ports for the box's servers, so two boxes (a developer's and CI's, in two clones) never collide.

import { createServer } from 'node:net';

function listenable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const got = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(got));
    });
  });
}

export async function freePort(): Promise<number> {
  const port = await listenable(0);
  if (port === undefined) throw new Error('No free port on 127.0.0.1.');
  return port;
}

/** count consecutive free ports (the nodes' kubelet ports are base+i). */
export async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const results = await Promise.all(Array.from({ length: count }, (_, i) => listenable(base + i)));
    if (results.every((p) => p !== undefined)) return base;
  }
  throw new Error(`No ${count} consecutive free ports found on 127.0.0.1.`);
}

export interface Ports {
  apiserver: number;
  etcd: number;
  etcdPeer: number;
  controllerManager: number;
  scheduler: number;
  minio: number;
  minioConsole: number;
  /** the csi-snapshot-metadata sidecar's gRPC (TLS) port on the host's address */
  snapshotMetadata: number;
  /** Velero server's metrics */
  velero: number;
  kubeletBase: number;
}

export async function allocatePorts(nodes: number): Promise<Ports> {
  const taken = new Set<number>();
  const next = async (): Promise<number> => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  const kubeletBase = await freePortRange(nodes);
  for (let i = 0; i < nodes; i++) taken.add(kubeletBase + i);
  return {
    apiserver: await next(),
    etcd: await next(),
    etcdPeer: await next(),
    controllerManager: await next(),
    scheduler: await next(),
    minio: await next(),
    minioConsole: await next(),
    snapshotMetadata: await next(),
    velero: await next(),
    kubeletBase,
  };
}
