// Against the pinned restic (built on demand) and any other restic found (PATH, ~/.cache/ferry/tools): back up a
// directory of awkward entries, then check that ferry re-encodes each tree blob and the snapshot to identical
// bytes, and that nodeFromStat builds the same nodes restic recorded.
import assert from 'node:assert/strict';
import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { nodeFromStat } from '../../../src/engine/fsmeta/read.ts';
import type { ReadOptions } from '../../../src/engine/fsmeta/read.ts';
import { XattrReader } from '../../../src/engine/fsmeta/xattr.ts';
import { decodeSnapshot, encodeSnapshot } from '../../../src/engine/snapshot/snapshot.ts';
import { encodeNode } from '../../../src/engine/tree/nodejson.ts';
import { decodeTree, encodeTree, findNode } from '../../../src/engine/tree/tree.ts';
import type { TreeNode } from '../../../src/engine/tree/node.ts';
import { makeFixtureDir } from './restic/fixture-dir.ts';
import { goReencoded, lossyTarget, writesRawLinkTargets } from './restic/legacy.ts';
import { backupWithRestic, findResticBinaries, hasFeature, resticTimeZone } from './restic/run.ts';
import type { ResticBackup } from './restic/run.ts';
import { toolPath } from '../../support/tools.ts';

const pinned = await toolPath('restic');
const binaries = [pinned, ...findResticBinaries().filter((b) => b !== pinned)];

/** The fixture directory's tree: follow the absolute path's components from the snapshot root. */
function fixtureTree(backup: ResticBackup, source: string): TreeNode[] {
  let nodes = decodeTree(backup.trees.get(decodeSnapshot(backup.snapshot).tree)!);
  for (const part of source.split('/').filter((p) => p !== '')) {
    const node = findNode(nodes, Buffer.from(part));
    assert.ok(node?.subtree, `restic's snapshot has no directory ${part}`);
    nodes = decodeTree(backup.trees.get(node.subtree)!);
  }
  return nodes;
}

/** Compares nodeFromStat with every node restic recorded under `dir`; returns how many were compared. */
async function compareNodes(backup: ResticBackup, dir: Buffer, nodes: TreeNode[], opts: ReadOptions): Promise<number> {
  let compared = 0;
  for (const theirs of nodes) {
    const path = Buffer.concat([dir, Buffer.from('/'), theirs.name]);
    const ours = await nodeFromStat(theirs.name, await lstat(path, { bigint: true }), path, opts);
    // restic stores the content it read and the subtree it built
    Object.assign(ours, { content: theirs.content, subtree: theirs.subtree });
    if (!writesRawLinkTargets(backup.trees.values())) ours.linkTarget = lossyTarget(ours.linkTarget);
    assert.equal(encodeNode(ours), encodeNode(theirs), `node ${path.toString()} (restic ${backup.version})`);
    compared++;
    if (theirs.subtree)
      compared += await compareNodes(backup, path, decodeTree(backup.trees.get(theirs.subtree)!), opts);
  }
  return compared;
}

for (const restic of binaries) {
  test(`matches ${restic}`, async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'ferry-interop-'));
    const previousTz = process.env.TZ;
    try {
      const source = join(scratch, 'src');
      await makeFixtureDir(source);
      const backup = backupWithRestic(restic, source, join(scratch, 'repo'));
      assert.deepEqual(
        encodeSnapshot(decodeSnapshot(backup.snapshot)),
        backup.snapshot,
        `snapshot of restic ${backup.version}`,
      );
      const expected = writesRawLinkTargets(backup.trees.values()) ? (blob: Uint8Array) => blob : goReencoded;
      for (const [id, blob] of backup.trees)
        assert.deepEqual(encodeTree(decodeTree(blob)), expected(blob), `tree ${id} of restic ${backup.version}`);

      process.env.TZ = resticTimeZone;
      const xattrs = new XattrReader();
      assert.ok((await compareNodes(backup, Buffer.from(source), fixtureTree(backup, source), { xattrs })) >= 25);
      if (hasFeature(restic, 'device-id-for-hardlinks')) {
        const hardlinksOnly = backupWithRestic(
          restic,
          source,
          join(scratch, 'repo-hardlinks'),
          'device-id-for-hardlinks',
        );
        await compareNodes(hardlinksOnly, Buffer.from(source), fixtureTree(hardlinksOnly, source), {
          xattrs,
          deviceIdOnlyForHardlinks: true,
        });
      }
    } finally {
      if (previousTz === undefined) delete process.env.TZ;
      else process.env.TZ = previousTz;
      await rm(scratch, { recursive: true, force: true });
    }
  });
}
