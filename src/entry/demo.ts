// `npm run demo`: the engine end to end on this machine. Creates a sample directory, backs it up into a new
// local repository with live progress, restores it elsewhere, compares every file and prints a summary.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { consola } from 'consola';
import { FsBackend } from '../shared/backend/fs.ts';
import { Repository } from '../shared/repository/repository.ts';
import { backup } from '../shared/backup/backup.ts';
import { restoreTree } from '../shared/restore/restorer.ts';
import { checkRepository } from '../shared/check/check.ts';
import { formatBytes, progressReporter } from '../cli/output.ts';

async function makeSample(dir: string): Promise<void> {
  for (let d = 0; d < 8; d++) {
    const sub = join(dir, `app/shard-${d}`);
    await mkdir(sub, { recursive: true });
    for (let f = 0; f < 50; f++) await writeFile(join(sub, `record-${f}.json`), JSON.stringify({ shard: d, record: f, text: 'ferry '.repeat(200) }));
  }
  await writeFile(join(dir, 'app/blob.bin'), randomBytes(24 << 20));
  await writeFile(join(dir, 'app/copy.bin'), await readFile(join(dir, 'app/blob.bin')));
  await symlink('blob.bin', join(dir, 'app/current'));
}

async function digest(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const full = join(e.parentPath, e.name);
    out.set(relative(root, full), createHash('sha256').update(await readFile(full)).digest('hex'));
  }
  return out;
}

const work = await mkdtemp(join(tmpdir(), 'ferry-demo-'));
try {
  const source = join(work, 'source');
  await makeSample(source);
  consola.start(`sample data in ${source}`);
  const repo = await Repository.init(new FsBackend(join(work, 'repo')), 'demo password');
  consola.info(`repository ${repo.config.id.slice(0, 10)} (restic format v2) at ${join(work, 'repo')}`);

  let progress = progressReporter(false);
  const first = await backup(repo, { paths: [source], tags: ['demo'], onProgress: (p) => progress.update(p) });
  progress.done();
  const s = first.snapshot.summary!;
  consola.success(`snapshot ${first.snapshotID.slice(0, 8)}: ${s.totalFilesProcessed} files, ${formatBytes(s.totalBytesProcessed)} read, ${formatBytes(s.dataAddedPacked)} stored (deduplicated and compressed)`);

  const second = await backup(repo, { paths: [source], parent: { id: first.snapshotID, snapshot: first.snapshot } });
  consola.success(`second snapshot ${second.snapshotID.slice(0, 8)}: ${second.snapshot.summary!.filesUnmodified} files unchanged, ${formatBytes(second.stats.dataAdded)} new data`);

  const target = join(work, 'restored');
  progress = progressReporter(false);
  await restoreTree(repo, first.snapshot.tree, { target, subpath: source, onProgress: (p) => progress.update(p) });
  progress.done();
  const [a, b] = await Promise.all([digest(source), digest(target)]);
  const same = a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
  const check = await checkRepository(repo, { readData: true });
  consola.box([
    `backed up      ${a.size} files, ${formatBytes(s.totalBytesProcessed)}`,
    `stored         ${formatBytes(s.dataAddedPacked)} in ${first.stats.packs} packs`,
    `restored       ${b.size} files into ${target}`,
    `identical      ${same ? 'yes' : 'NO'}`,
    `check          ${check.errors.length === 0 ? `clean (${check.blobsRead} blobs verified)` : check.errors.join('; ')}`,
  ].join('\n'));
  if (!same || check.errors.length > 0) process.exitCode = 1;
} finally {
  await rm(work, { recursive: true, force: true });
}
