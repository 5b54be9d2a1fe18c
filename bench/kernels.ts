// The physical limits on this machine, one core each: how fast data can be read, and how fast each step of the
// data path runs on its own (hashing, encryption, MAC, compression, chunking), plus what MinIO ingests and how fast
// the dataset can be copied into a fresh filesystem. ferry's figures in the suite are read against these: a backup
// cannot beat the slowest kernel it must run on every byte, and no restore can write files faster than cp does.
// Standalone: `./node_modules/.bin/node bench/kernels.ts [--quick]` writes bench/results/kernels-<time>.{json,md}.
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Chunker } from '../src/engine/chunker/chunker.ts';
import { parsePolynomial } from '../src/engine/chunker/polynomial.ts';
import { compress, decompress } from '../src/engine/compress/zstd.ts';
import { poly1305JS } from '../src/engine/crypto/poly1305-js.ts';
import { poly1305Wasm } from '../src/engine/crypto/poly1305-wasm.ts';
import { randomBytes, textBytes } from './dataset/content.ts';
import { restoreFolder } from './measure/fresh-fs.ts';
import { settle } from './measure/settle.ts';
import { minioTarget } from './targets.ts';

export interface KernelResult {
  name: string;
  bytesPerSecond: number;
  note?: string;
}

const MiB = 2 ** 20;
/** restic's chunker tests use this polynomial; any degree-53 irreducible one runs at the same speed */
const polynomial = parsePolynomial('3DA3358B4DC173');

/** Runs `step` (which processes `bytes` bytes) repeatedly for at least `seconds`, returns bytes per second. */
function rate(bytes: number, seconds: number, step: () => void): number {
  step(); // warm-up: JIT, first allocations
  let done = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < seconds * 1000) {
    step();
    done += bytes;
    elapsed = performance.now() - started;
  }
  return done / (elapsed / 1000);
}

async function cachedReadRate(path: string, seconds: number): Promise<number> {
  const size = (await stat(path)).size;
  const fh = await open(path, constants.O_RDONLY);
  try {
    const buf = Buffer.allocUnsafe(MiB);
    let done = 0;
    let position = 0;
    const started = performance.now();
    while (performance.now() - started < seconds * 1000) {
      const { bytesRead } = await fh.read(buf, 0, MiB, position);
      done += bytesRead;
      position = bytesRead < MiB || position + MiB >= size ? 0 : position + MiB;
    }
    return done / ((performance.now() - started) / 1000);
  } finally {
    await fh.close();
  }
}

/** The disk itself, past the page cache: dd with O_DIRECT (JS cannot promise the aligned buffers it needs). */
async function directReadRate(path: string): Promise<number> {
  const started = performance.now();
  const { stderr } = await promisify(execFile)('dd', [`if=${path}`, 'of=/dev/null', 'bs=1M', 'iflag=direct']);
  const bytes = Number(/^(\d+) bytes/m.exec(stderr)?.[1]);
  if (!(bytes > 0)) throw new Error(`dd printed no byte count: ${stderr.trim()}`);
  return bytes / ((performance.now() - started) / 1000);
}

async function minioIngest(dir: string, seconds: number, parallel: number): Promise<number> {
  const target = await minioTarget(join(dir, 'minio-kernels'));
  const place = await target.fresh(`kernels-${parallel}-${Date.now().toString(36)}`);
  if (place.kind !== 's3') throw new Error('The MinIO target gave a local place.');
  const client = new S3Client({
    endpoint: place.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: place.accessKey, secretAccessKey: place.secretKey },
  });
  try {
    const body = randomBytes(1, 'minio-ingest', 16 * MiB);
    let done = 0;
    let n = 0;
    const started = performance.now();
    const worker = async (): Promise<void> => {
      while (performance.now() - started < seconds * 1000) {
        await client.send(new PutObjectCommand({ Bucket: place.bucket, Key: `obj-${n++}`, Body: body }));
        done += body.length;
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    return done / ((performance.now() - started) / 1000);
  } finally {
    client.destroy();
    await target.discard(place).catch(() => {});
    await target.close();
  }
}

/** A folder of the dataset to copy, with its size, and where the copy's filesystem may be made. */
export interface TreeToCopy {
  path: string;
  bytes: number;
  files: number;
  work: string;
}

/**
 * `cp -a` of a dataset, read from the page cache, into a fresh filesystem made as each restore's is: files with their
 * content, owners, modes and times, by one process, with nothing to decrypt, decompress or check. What a restore
 * adds to this is its own work; what this costs is the kernel's and the disk's.
 */
export async function copyTreeRate(tree: TreeToCopy): Promise<{ bytesPerSecond: number; on: string }> {
  const run = promisify(execFile);
  // read once, so the copy is timed from the page cache as a restore reads a repository a backup just wrote
  await run('sh', ['-c', 'tar -cf - . | cat > /dev/null'], { cwd: tree.path });
  const folder = await restoreFolder(tree.work, tree.bytes, tree.files);
  try {
    await settle();
    const started = performance.now();
    await run('cp', ['-a', '.', folder.dir], { cwd: tree.path });
    return { bytesPerSecond: tree.bytes / ((performance.now() - started) / 1000), on: folder.kind };
  } finally {
    await folder.release();
  }
}

export interface KernelOptions {
  /** a large file of the dataset, for the read speed */
  readFile?: string;
  /** where MinIO may keep its data; no MinIO figures without it */
  dir?: string;
  /** a dataset to copy into a fresh filesystem, the floor under a restore of it */
  copy?: TreeToCopy;
  seconds: number;
  log: (message: string) => void;
}

export async function runKernels(opts: KernelOptions): Promise<KernelResult[]> {
  const results: KernelResult[] = [];
  const add = (name: string, bytesPerSecond: number, note?: string): void => {
    results.push({ name, bytesPerSecond, note });
    opts.log(`kernel ${name}: ${(bytesPerSecond / 1e6).toFixed(0)} MB/s`);
  };
  const s = opts.seconds;
  if (opts.readFile) {
    add(
      'read, page cache (1 MiB reads)',
      await cachedReadRate(opts.readFile, s),
      opts.readFile.split('/').slice(-2).join('/'),
    );
    try {
      add('read, disk (dd O_DIRECT, 1 MiB reads)', await directReadRate(opts.readFile), 'past the page cache');
    } catch (err) {
      opts.log(`no O_DIRECT read here: ${(err as Error).message}`);
    }
  }
  const random = randomBytes(1, 'kernels-random', 16 * MiB);
  const text = textBytes(1, 'kernels-text', 16 * MiB);
  const oneMiB = random.subarray(0, MiB);
  add(
    'SHA-256 (node:crypto)',
    rate(MiB, s, () => createHash('sha256').update(oneMiB).digest()),
    '1 MiB buffers',
  );
  const key = randomBytes(1, 'key', 32);
  add(
    'AES-256-CTR (node:crypto)',
    rate(MiB, s, () => createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(oneMiB)),
    '1 MiB buffers',
  );
  add(
    'Poly1305, WebAssembly kernel',
    rate(MiB, s, () => poly1305Wasm(oneMiB, key)),
    'src/engine/crypto/poly1305-wasm.ts',
  );
  add(
    'Poly1305, JS kernel',
    rate(MiB, s, () => poly1305JS(oneMiB, key)),
    'reference kernel',
  );
  const randomPacked = compress(random);
  const textPacked = compress(text);
  add(
    'zstd -3 compress, random',
    rate(random.length, s, () => compress(random)),
    `ratio ${(random.length / randomPacked.length).toFixed(2)}`,
  );
  add(
    'zstd -3 compress, text',
    rate(text.length, s, () => compress(text)),
    `ratio ${(text.length / textPacked.length).toFixed(2)}`,
  );
  add(
    'zstd decompress, random',
    rate(random.length, s, () => decompress(randomPacked, random.length)),
  );
  add(
    'zstd decompress, text',
    rate(text.length, s, () => decompress(textPacked, text.length)),
  );
  for (const kernel of ['wasm', 'js'] as const) {
    add(
      `Rabin chunker, ${kernel === 'wasm' ? 'WebAssembly' : 'JS'} kernel`,
      rate(random.length, s, () => {
        const chunker = new Chunker(polynomial, { kernel });
        for (let at = 0; at < random.length;) {
          const cut = chunker.next(random, at);
          if (cut < 0) break;
          at = cut;
        }
      }),
      'boundaries of restic/chunker',
    );
  }
  if (opts.copy) {
    const copied = await copyTreeRate(opts.copy);
    add(
      'copy into a fresh filesystem (cp -a, from the page cache)',
      copied.bytesPerSecond,
      `${opts.copy.files} files; into ${copied.on}`,
    );
  }
  if (opts.dir) {
    add(
      'MinIO ingest, PUT 16 MiB, 1 stream',
      await minioIngest(opts.dir, s * 2, 1),
      'server and client share the cores',
    );
    add(
      'MinIO ingest, PUT 16 MiB, 4 streams',
      await minioIngest(opts.dir, s * 2, 4),
      'server and client share the cores',
    );
  }
  return results;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const dir = process.env.FERRY_BENCH_DIR || '/work/scratch/bench';
  const readFile = process.argv.find((a, i) => process.argv[i - 1] === '--read-file');
  const results = await runKernels({ readFile, dir, seconds: quick ? 1 : 3, log: (m) => console.log(m) });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const out = join(import.meta.dirname, 'results');
  await mkdir(out, { recursive: true });
  await writeFile(join(out, `kernels-${stamp}.json`), JSON.stringify(results, null, 2));
  const md = [
    '| kernel (one core) | MB/s | note |',
    '|---|--:|---|',
    ...results.map((r) => `| ${r.name} | ${(r.bytesPerSecond / 1e6).toFixed(0)} | ${r.note ?? ''} |`),
  ];
  await writeFile(join(out, `kernels-${stamp}.md`), md.join('\n') + '\n');
}

if (import.meta.main) await main();
