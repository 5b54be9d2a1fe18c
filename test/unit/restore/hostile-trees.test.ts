// A restore never changes anything outside its target, whatever the repository holds and whatever the target
// already holds. Hostile trees (the same name repeated in one folder as a symlink to an absolute or `../` path and
// then a folder, file, fifo, device or hard link; deep nesting) are written raw into a real repository, and the
// target starts with symlinks planted where the snapshot has folders and files. Each is restored through
// `ferry repo restore` and through restoreTree (what the transfer step calls); a sentinel tree beside the target,
// where every symlink points, must come out identical (content, modes, owners, times, links) with no new entries.
// The restore may succeed or refuse; it must not hang (a fifo written as a file) or write through a symlink.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { FsBackend } from '../../../src/engine/backend/fs.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { listSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { utcTime } from '../../../src/engine/tree/gotime.ts';
import { goMode } from '../../../src/engine/tree/mode.ts';
import { newNode, type TreeNode } from '../../../src/engine/tree/node.ts';
import { spawnFerry } from '../../support/ferry-cli.ts';
import { RawTreeWriter } from '../../support/hostile-repo.ts';
import { testRepo } from '../../support/repo.ts';
import { describeTree } from '../../support/sentinel.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-hostile-'));
test.after(() => rm(work, { recursive: true, force: true }));
const sentinel = join(work, 'sentinel');
const names = ['a', 'b', 'x'] as const;
/** every symlink points into the sentinel, absolutely or by climbing out of the target */
const linkTargets = [
  sentinel,
  `${sentinel}/b`,
  '../sentinel',
  '../../sentinel',
  '../../../sentinel/b',
  '../sentinel/a',
];

type Spec =
  | { kind: 'dir'; name: string; children: Spec[] }
  | { kind: 'file' | 'fifo' | 'chardev' | 'hardlink'; name: string }
  | { kind: 'symlink'; name: string; target: string }
  | { kind: 'deep'; name: string; depth: number; children: Spec[] };

const name = fc.constantFrom(...names);
const leaf: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({ kind: fc.constantFrom('file' as const, 'fifo' as const, 'chardev' as const, 'hardlink' as const), name }),
  fc.record({ kind: fc.constant('symlink' as const), name, target: fc.constantFrom(...linkTargets) }),
);
/** a symlink, then entries of the same name after it: the attack of issue 28 */
const shadowed = (children: fc.Arbitrary<Spec[]>): fc.Arbitrary<Spec[]> =>
  fc
    .tuple(
      name,
      fc.constantFrom(...linkTargets),
      fc.array(fc.constantFrom('dir', 'file', 'fifo', 'chardev', 'hardlink'), { minLength: 1, maxLength: 3 }),
      children,
    )
    .map(([n, target, kinds, below]) => [
      { kind: 'symlink', name: n, target },
      ...kinds.map((k): Spec =>
        k === 'dir' ? { kind: 'dir', name: n, children: below } : { kind: k as 'file', name: n },
      ),
    ]);
const { entries } = fc.letrec<{ entries: Spec[]; entry: Spec }>((tie) => ({
  entry: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.record({ kind: fc.constant('dir' as const), name, children: tie('entries') }),
    fc.record({
      kind: fc.constant('deep' as const),
      name,
      depth: fc.integer({ min: 20, max: 60 }),
      children: tie('entries'),
    }),
  ),
  entries: fc
    .tuple(fc.array(tie('entry'), { maxLength: 4 }), shadowed(fc.array(tie('entry'), { maxLength: 3 })))
    .map(([plain, attack]) => [...plain, ...attack]),
}));

const mtime = utcTime(1_234_567_890_123_456_789n);
/** st_rdev of /dev/null (1:3): a device node that is harmless if anything wrote through it */
const devNull = 0x103n;

async function writeSpecs(w: RawTreeWriter, specs: Spec[], content: string): Promise<string> {
  const nodes: TreeNode[] = [];
  for (const s of specs) {
    const n = Buffer.from(s.name);
    const common = { mtime, atime: mtime, uid: 4242, gid: 4242 };
    switch (s.kind) {
      case 'dir':
        nodes.push(
          newNode(n, 'dir', {
            ...common,
            mode: (goMode.dir | 0o777) >>> 0,
            subtree: await writeSpecs(w, s.children, content),
          }),
        );
        break;
      case 'deep': {
        let subtree = await writeSpecs(w, s.children, content);
        for (let i = 0; i < s.depth; i++)
          subtree = await w.tree([newNode(n, 'dir', { ...common, mode: (goMode.dir | 0o755) >>> 0, subtree })]);
        nodes.push(newNode(n, 'dir', { ...common, mode: (goMode.dir | 0o755) >>> 0, subtree }));
        break;
      }
      case 'file':
      case 'hardlink': {
        // setuid and a foreign owner: what must never land outside the target
        const data = Buffer.from(content);
        const link = s.kind === 'hardlink' ? { links: 2n, inode: 77n, deviceId: 1n } : { links: 1n };
        nodes.push(
          newNode(n, 'file', {
            ...common,
            ...link,
            mode: (goMode.setuid | 0o777) >>> 0,
            size: BigInt(data.length),
            content: [await w.data(data)],
          }),
        );
        break;
      }
      case 'fifo':
        nodes.push(newNode(n, 'fifo', { ...common, mode: (goMode.namedPipe | 0o666) >>> 0 }));
        break;
      case 'chardev':
        nodes.push(
          newNode(n, 'chardev', {
            ...common,
            mode: (goMode.device | goMode.charDevice | 0o666) >>> 0,
            device: devNull,
          }),
        );
        break;
      case 'symlink':
        nodes.push(
          newNode(n, 'symlink', { ...common, mode: (goMode.symlink | 0o777) >>> 0, linkTarget: Buffer.from(s.target) }),
        );
        break;
    }
  }
  return w.tree(nodes);
}

/** The sentinel: entries named as the snapshot's are, so writing through any planted or restored symlink hits one. */
async function makeSentinel(): Promise<void> {
  await rm(sentinel, { recursive: true, force: true });
  await mkdir(join(sentinel, 'a', 'a'), { recursive: true });
  await writeFile(join(sentinel, 'b'), 'sentinel b\n', { mode: 0o644 });
  await writeFile(join(sentinel, 'a', 'x'), 'sentinel a/x\n', { mode: 0o600 });
}

/** A target that already holds symlinks where the snapshot has entries (an existing volume an attacker wrote). */
async function plantTarget(target: string): Promise<void> {
  await rm(target, { recursive: true, force: true });
  await mkdir(join(target, 'x'), { recursive: true });
  await symlink(sentinel, join(target, 'a'));
  await symlink(`${sentinel}/b`, join(target, 'b'));
  await symlink('../../sentinel/a', join(target, 'x', 'a'));
  await symlink('../../sentinel/b', join(target, 'x', 'b'));
}

/** Runs `restore` and checks that the sentinel and the folder around the target are as they were. */
async function assertContained(target: string, restore: () => Promise<string>): Promise<string> {
  await makeSentinel();
  await describeTree(sentinel); // reading files moves their atime once; the comparison starts after that
  await plantTarget(target);
  const before = await describeTree(sentinel);
  const beside = (await readdir(work)).sort();
  const outcome = await restore();
  assert.deepEqual(await describeTree(sentinel), before, `the sentinel changed (restore: ${outcome})`);
  assert.deepEqual((await readdir(work)).sort(), beside, 'new entries appeared beside the target');
  return outcome;
}

const repoPath = join(work, 'repo');
const repo = await testRepo(new FsBackend(repoPath));
let runs = 0;

async function hostileSnapshot(specs: Spec[]): Promise<string> {
  const w = new RawTreeWriter(repo);
  return w.snapshot(await writeSpecs(w, specs, `hostile ${runs++}\n`));
}

async function viaCli(snapshot: string, target: string): Promise<string> {
  const { child, done } = spawnFerry(['repo', 'restore', snapshot, '-r', repoPath, '--target', target]);
  // a fifo opened as a file would block the restore for ever
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const r = await done.finally(() => clearTimeout(timer));
  assert.notEqual(r.signal, 'SIGKILL', 'ferry repo restore hung');
  return r.code === 0 ? 'succeeded' : `refused: ${r.stderr.trim().split('\n').at(-1)}`;
}

async function viaTransferPath(snapshot: string, target: string): Promise<string> {
  await repo.loadIndex();
  const tree = (await listSnapshots(repo)).find((e) => e.id === snapshot)!.snapshot.tree;
  const timeout = AbortSignal.timeout(60_000);
  try {
    await restoreTree(repo, tree, { target, subpath: '/', signal: timeout });
    return 'succeeded';
  } catch (err) {
    assert.ok(!timeout.aborted, 'the restore hung');
    return `refused: ${(err as Error).message}`;
  }
}

test(
  'the reproduction of issue 28: a symlink to outside, then a folder and a file of the same name',
  { timeout: 300_000 },
  async () => {
    const specs: Spec[] = [
      { kind: 'symlink', name: 'a', target: sentinel },
      {
        kind: 'dir',
        name: 'a',
        children: [
          { kind: 'file', name: 'b' },
          { kind: 'fifo', name: 'x' },
        ],
      },
      { kind: 'symlink', name: 'b', target: `${sentinel}/b` },
      { kind: 'file', name: 'b' },
    ];
    const snapshot = await hostileSnapshot(specs);
    await assertContained(join(work, 'target-cli'), () => viaCli(snapshot, join(work, 'target-cli')));
    await assertContained(join(work, 'target-step'), () => viaTransferPath(snapshot, join(work, 'target-step')));
  },
);

test(
  "hostile trees restored by the CLI and by the transfer step's code change nothing outside the target",
  { timeout: 1_200_000 },
  async () => {
    await fc.assert(
      fc.asyncProperty(entries, async (specs) => {
        const snapshot = await hostileSnapshot(specs);
        await assertContained(join(work, 'target-cli'), () => viaCli(snapshot, join(work, 'target-cli')));
        await assertContained(join(work, 'target-step'), () => viaTransferPath(snapshot, join(work, 'target-step')));
      }),
      { numRuns: 12 },
    );
  },
);
