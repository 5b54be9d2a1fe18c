// Records what a real restic writes for the awkward fixture directory, as golden files for
// restic-golden.test.ts (which then needs no restic binary). Usage, from the repository root:
//
//   node test/unit/tree/gen/restic-golden.ts /path/to/restic
//
// Writes test/unit/tree/fixtures/restic-<version>/: snapshot.json (the snapshot's JSON bytes),
// trees/<id> (the fixture directory's tree blobs, named by their SHA-256) and root (the fixture tree id).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSnapshot } from '../../../../src/engine/snapshot/snapshot.ts';
import { decodeTree, findNode } from '../../../../src/engine/tree/tree.ts';
import { makeFixtureDir } from '../restic/fixture-dir.ts';
import { backupWithRestic } from '../restic/run.ts';

const restic = process.argv[2];
if (!restic) throw new Error('usage: restic-golden.ts <restic binary>');
const scratch = await mkdtemp(join(tmpdir(), 'ferry-golden-'));
try {
  const source = join(scratch, 'src');
  await makeFixtureDir(source);
  const backup = backupWithRestic(restic, source, join(scratch, 'repo'));
  let id = decodeSnapshot(backup.snapshot).tree;
  for (const part of source.split('/').filter((p) => p !== ''))
    id = findNode(decodeTree(backup.trees.get(id)!), Buffer.from(part))!.subtree!;
  const out = new URL(`../fixtures/restic-${backup.version}/`, import.meta.url);
  await rm(out, { recursive: true, force: true });
  await mkdir(new URL('trees/', out), { recursive: true });
  await writeFile(new URL('snapshot.json', out), backup.snapshot);
  await writeFile(new URL('root', out), `${id}\n`);
  const pending = [id];
  while (pending.length > 0) {
    const tree = pending.pop()!;
    await writeFile(new URL(`trees/${tree}`, out), backup.trees.get(tree)!);
    for (const node of decodeTree(backup.trees.get(tree)!)) if (node.subtree) pending.push(node.subtree);
  }
  console.log(`wrote ${out.pathname}`);
} finally {
  await rm(scratch, { recursive: true, force: true });
}
