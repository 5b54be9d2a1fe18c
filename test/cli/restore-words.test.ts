// A restore's summary and describe in a restore's words: what it wrote, not a backup's "added, deduplicated,
// stored" (a restore adds nothing to the repository), and as many files restored as the backup counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderDescription } from '../../src/cli/kube/describe.ts';
import type { Resource } from '../../src/cli/kube/kinds.ts';
import { printCreated } from '../../src/cli/kube/result.ts';
import { ferryOK, parseJSON } from '../support/ferry-cli.ts';

const restore = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'DataDownload',
  metadata: { name: 'r1', namespace: 'app', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { targetPVC: { name: 'data' }, backupStorageLocation: 'l', source: { dataUpload: { name: 'b1' } } },
  status: {
    phase: 'Completed',
    snapshotID: 'abcdef0123456789',
    completionTimestamp: '2026-01-01T00:00:07Z',
    stats: { files: 241, bytes: 46_766_490, bytesAdded: 0, bytesStored: 0, durationSeconds: 5 },
  },
} as unknown as Resource;

test('describe of a restore says what it restored, with no backup words', () => {
  const text = renderDescription({ object: restore, phaseHistory: [], jobs: [], events: [] });
  assert.match(text, /^ {2}Restored: +44\.6 MiB in 241 files$/m);
  assert.doesNotMatch(text, /Added|Deduplicated|Stored/);
});

test('the summary after restore create --wait says what it restored, from which snapshot', () => {
  let out = '';
  const write = process.stdout.write;
  process.stdout.write = ((s: string) => {
    out += s;
    return true;
  }) as typeof process.stdout.write;
  try {
    printCreated(restore, 'table', true);
  } finally {
    process.stdout.write = write;
  }
  assert.match(out, /restore r1 Completed: restored 44\.6 MiB in 241 files from snapshot abcdef01, took 7s/);
  assert.doesNotMatch(out, /added/);
});

test('a restore counts the files a backup counts: folders and symbolic links are not files', async (t) => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-restore-count-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  const source = join(work, 'source');
  await mkdir(join(source, 'lost+found'), { recursive: true });
  await writeFile(join(source, 'a.txt'), 'a');
  await writeFile(join(source, 'b.txt'), 'b');
  await symlink('a.txt', join(source, 'current'));
  const repo = ['-r', join(work, 'repo'), '--json'];
  await ferryOK(['repo', 'init', ...repo]);
  const backup = parseJSON<{ total_files_processed: number }>(await ferryOK(['repo', 'backup', ...repo, source]));
  const restored = parseJSON<{ files_restored: number }>(
    await ferryOK(['repo', 'restore', 'latest', '--target', join(work, 'target'), ...repo]),
  );
  assert.equal(backup.total_files_processed, 2);
  assert.equal(restored.files_restored, backup.total_files_processed);
});
