// A private MinIO server for tests: loopback only, a free port, a temporary data folder, random root credentials.
// Fault tests stop it mid-operation and restart it on the same port with the same data.

import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { Agent as HttpsAgent, get as httpsGet } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCertificates } from './test-ca.ts';
import { toolPath } from './tools.ts';

export interface MinioOptions {
  /** serve https with a certificate from a throwaway CA (see `caFile`) */
  tls?: boolean;
}

export interface Minio {
  /** http://127.0.0.1:PORT, or https:// with `tls` */
  endpoint: string;
  /** with `tls`: the PEM file of the CA that signed the server certificate */
  caFile?: string;
  accessKey: string;
  secretKey: string;
  dataDir: string;
  /** an SDK client with the root credentials: what an attacker holding the location's credentials can do */
  client: S3Client;
  /** Creates the bucket (existing is fine) and returns its name; `objectLock`: created with S3 Object Lock. */
  bucket(name: string, opts?: { objectLock?: boolean }): Promise<string>;
  /** Kills the server (SIGKILL by default, like a crash) and waits until it is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port with the same data, and waits until it serves requests. */
  restart(): Promise<void>;
  /** Stops it and deletes its data. */
  destroy(): Promise<void>;
}

const readyTimeoutMs = 60_000;
const stopTimeoutMs = 10_000;
const running = new Set<ChildProcess>();

// a test that crashes must not leave servers behind
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

interface Server {
  child: ChildProcess;
  /** the last few KiB of its output, for failure messages */
  output: () => string;
  exited: Promise<void>;
}

/** `root` holds the data folder and the certs folder, so nothing is read from or written to the user's ~/.minio. */
function launch(binary: string, port: number, root: string, env: NodeJS.ProcessEnv): Server {
  const args = [
    'server',
    '--quiet',
    '--address',
    `127.0.0.1:${port}`,
    '--certs-dir',
    join(root, 'certs'),
    join(root, 'data'),
  ];
  const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const keep = (b: Buffer): void => {
    output = (output + b.toString()).slice(-4096);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  return { child, output: () => output, exited };
}

/** True when the URL answers 200; `ca` is trusted for https. */
function probe(url: string, ca?: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const onResponse = (res: { statusCode?: number; resume(): void }): void => {
      res.resume();
      resolve(res.statusCode === 200);
    };
    const req = url.startsWith('https:') ? httpsGet(url, { ca }, onResponse) : httpGet(url, onResponse);
    req.setTimeout(2000, () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

async function waitReady(endpoint: string, server: Server, ca?: Buffer): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  let exited = false;
  void server.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`MinIO exited before becoming ready:\n${server.output()}`);
    const ok = await probe(`${endpoint}/minio/health/ready`, ca);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`MinIO did not become ready at ${endpoint} within ${readyTimeoutMs / 1000} s:\n${server.output()}`);
}

async function stopServer(server: Server, signal: NodeJS.Signals): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill(signal);
  const timer = setTimeout(() => server.child.kill('SIGKILL'), stopTimeoutMs);
  await server.exited;
  clearTimeout(timer);
}

export async function startMinio(opts: MinioOptions = {}): Promise<Minio> {
  const binary = await toolPath('minio');
  const root = await mkdtemp(join(tmpdir(), 'ferry-minio-'));
  const dataDir = join(root, 'data');
  const port = await freePort();
  let caFile: string | undefined;
  if (opts.tls) {
    // MinIO turns on https when its certs folder holds public.crt and private.key
    await mkdir(join(root, 'certs'));
    caFile = (await makeTestCertificates(join(root, 'certs'), 'public.crt', 'private.key')).caFile;
  }
  const ca = caFile ? await readFile(caFile) : undefined;
  const endpoint = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const accessKey = `ferry${randomBytes(4).toString('hex')}`;
  const secretKey = randomBytes(16).toString('hex');
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    MINIO_ROOT_USER: accessKey,
    MINIO_ROOT_PASSWORD: secretKey,
    MINIO_BROWSER: 'off',
    MINIO_UPDATE: 'off',
  };
  let server = launch(binary, port, root, env);
  await waitReady(endpoint, server, ca).catch(async (err: unknown) => {
    await stopServer(server, 'SIGKILL');
    throw err;
  });
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: accessKey, secretAccessKey: secretKey },
    requestHandler: new NodeHttpHandler({ httpsAgent: new HttpsAgent({ ca }) }),
  });

  return {
    endpoint,
    caFile,
    accessKey,
    secretKey,
    dataDir,
    client,
    async bucket(name, bucketOpts = {}) {
      const create = new CreateBucketCommand({ Bucket: name, ObjectLockEnabledForBucket: bucketOpts.objectLock });
      await client.send(create).catch((err: { name?: string }) => {
        if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
      });
      return name;
    },
    async stop(signal = 'SIGKILL') {
      await stopServer(server, signal);
    },
    async restart() {
      await stopServer(server, 'SIGTERM');
      server = launch(binary, port, root, env);
      await waitReady(endpoint, server, ca);
    },
    async destroy() {
      await stopServer(server, 'SIGKILL');
      client.destroy();
      await rm(root, { recursive: true, force: true });
    },
  };
}
