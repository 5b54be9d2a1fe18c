// Backs a directory up with a real restic binary and reads back what it wrote: the snapshot (compacted
// from `restic cat snapshot`, which indents it) and the exact bytes of every tree blob.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { goCompactJson } from '../../../../src/engine/tree/gojson.ts';
import { utf8Bytes } from '../../../../src/engine/tree/goutf8.ts';

/** restic binaries to test against: on PATH and in ferry's tool cache (test/tools builds them there). */
export function findResticBinaries(): string[] {
  const found = (process.env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, 'restic'))
    .filter((p) => existsSync(p))
    .slice(0, 1);
  const cache = join(homedir(), '.cache', 'ferry', 'tools');
  if (existsSync(cache)) {
    for (const d of readdirSync(cache))
      if (d.startsWith('restic-') && existsSync(join(cache, d, 'restic'))) found.push(join(cache, d, 'restic'));
  }
  return found;
}

export interface ResticBackup {
  version: string;
  /** snapshot JSON as restic marshals it */
  snapshot: Uint8Array;
  /** every tree blob reachable from the snapshot, by id */
  trees: Map<string, Uint8Array>;
}

/** Time zone restic runs in, so times carry a non-zero offset; the caller's process should use the same. */
export const resticTimeZone = 'Europe/Berlin';

/** Whether this restic knows an (alpha) feature flag that RESTIC_FEATURES can switch on. */
export function hasFeature(restic: string, feature: string): boolean {
  try {
    return execFileSync(restic, ['features'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .includes(feature);
  } catch {
    return false;
  }
}

/** A fresh repository in `repo` holding one backup of `source`; `features` is passed as RESTIC_FEATURES. */
export function backupWithRestic(restic: string, source: string, repo: string, features = ''): ResticBackup {
  const env = {
    ...process.env,
    RESTIC_REPOSITORY: repo,
    RESTIC_PASSWORD: 'ferry-test',
    TZ: resticTimeZone,
    RESTIC_CACHE_DIR: `${repo}-cache`,
    RESTIC_FEATURES: features,
  };
  const run = (...args: string[]): Buffer =>
    execFileSync(restic, args, { env, maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  const version = run('version').toString().split(' ')[1];
  run('init', '--repository-version', '2');
  run('backup', '--host', 'ferry-test', '--tag', 'x<y', '--tag', 'pvc', source);
  const [{ id }] = JSON.parse(run('snapshots', '--json').toString()) as Array<{ id: string }>;
  const snapshot = utf8Bytes(goCompactJson(run('cat', 'snapshot', id).toString('utf8').trim()));
  const trees = new Map<string, Uint8Array>();
  const pending = [(JSON.parse(Buffer.from(snapshot).toString()) as { tree: string }).tree];
  while (pending.length > 0) {
    const tree = pending.pop()!;
    if (trees.has(tree)) continue;
    const blob = new Uint8Array(run('cat', 'blob', tree));
    trees.set(tree, blob);
    for (const m of Buffer.from(blob)
      .toString('utf8')
      .matchAll(/"subtree":"([0-9a-f]{64})"/g))
      pending.push(m[1]);
  }
  return { version, snapshot, trees };
}
