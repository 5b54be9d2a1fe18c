// Worker thread of the backup pool: reads, chunks, hashes, compresses, encrypts and verifies.
import { createHash } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { parsePolynomial } from '../chunker/polynomial.ts';
import { prepareBlob } from '../pack/prepare.ts';
import { fileChunks } from './file-chunks.ts';
import type { FromWorker, ToWorker, WorkerInit } from './worker-protocol.ts';
import { transferList } from './transfer.ts';

const init = workerData as WorkerInit;
const pol = parsePolynomial(init.polynomial);
const port = parentPort!;
const waiting = new Map<string, (need: boolean) => void>();
let nextAsk = 0;
const zeroIDs = new Map<number, string>();

function post(msg: FromWorker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(msg, transfer);
}

function ask(job: number, send: (ask: number) => FromWorker, transfer: ArrayBuffer[] = []): Promise<boolean> {
  const n = nextAsk++;
  return new Promise((resolve) => {
    waiting.set(`${job}:${n}`, resolve);
    post(send(n), transfer);
  });
}

function chunkID(data: Uint8Array, zero: boolean): string {
  if (!zero) return createHash('sha256').update(data).digest('hex');
  // every zero chunk of a length has the same id; sparse and empty regions are common enough to remember it
  let id = zeroIDs.get(data.length);
  if (id === undefined) {
    id = createHash('sha256').update(data).digest('hex');
    zeroIDs.set(data.length, id);
  }
  return id;
}

async function backupFile(job: number, path: Uint8Array): Promise<void> {
  const content: string[] = [];
  let size = 0;
  for await (const chunk of fileChunks(path, pol)) {
    const id = chunkID(chunk.data, chunk.zero);
    content.push(id);
    size += chunk.data.length;
    const length = chunk.data.length;
    const need = await ask(job, (n) => ({ op: 'chunk', job, ask: n, id, length }));
    if (!need) continue;
    const blob = prepareBlob(init.key, 'data', id, chunk.data, init.compression);
    await ask(job, (n) => ({ op: 'sealed', job, ask: n, blob, length }), transferList([blob.sealed]));
  }
  post({ op: 'fileDone', job, content, size });
}

function prepareMany(job: number, blobs: { id: string; type: 'data' | 'tree'; data: Uint8Array }[]): void {
  const out = blobs.map((b) => prepareBlob(init.key, b.type, b.id, b.data, init.compression));
  post({ op: 'prepared', job, blobs: out }, transferList(out.map((b) => b.sealed)));
}

port.on('message', (msg: ToWorker) => {
  switch (msg.op) {
    case 'answer': {
      const key = `${msg.job}:${msg.ask}`;
      const resolve = waiting.get(key);
      waiting.delete(key);
      resolve?.(msg.need);
      return;
    }
    case 'file':
      backupFile(msg.job, msg.path).catch((err: NodeJS.ErrnoException) => post({ op: 'failed', job: msg.job, message: err.message, code: err.code }));
      return;
    case 'prepare':
      try {
        prepareMany(msg.job, msg.blobs);
      } catch (err) {
        post({ op: 'failed', job: msg.job, message: (err as Error).message });
      }
      return;
  }
});
