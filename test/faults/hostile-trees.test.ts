// Trees that break restic's invariants, as an attacker with write access to the bucket (or a bad disk) could store
// them: repeated, unsorted, empty, "."/"..", slash or NUL names, a directory without a subtree, a
// file without a blob list or with a blob no index has. Each sits one level down, below a valid root that holds a
// file too, so a restore that trusted the walk would write before reaching it. `ferry repo check` (a real process)
// fails naming the tree and the entry; `ferry repo restore` fails naming them and writes nothing at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { hashID, type ID } from '../../src/engine/ids/id.ts';
import { prepareBlob } from '../../src/engine/pack/prepare.ts';
import type { PackWriter } from '../../src/engine/repository/pack-writer.ts';
import { newNode, type TreeNode } from '../../src/engine/tree/node.ts';
import { encodeNode } from '../../src/engine/tree/nodejson.ts';
import { utcTime } from '../../src/engine/tree/gotime.ts';
import { newSnapshot } from '../../src/engine/snapshot/snapshot.ts';
import { saveSnapshot } from '../../src/engine/repository/snapshots.ts';
import { ferry, hasStackTrace, parseJSON } from '../support/ferry-cli.ts';
import { testKDF, testPassword } from '../support/repo.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-hostile-trees-'));
test.after(() => rm(work, { recursive: true, force: true }));

const dirMode = 0x80000000 | 0o755;

/** A tree blob with exactly these nodes in this order: the encoder refuses what these tests need to store. */
function treeBytes(nodes: TreeNode[]): Uint8Array {
  return Buffer.from(`{"nodes":[${nodes.map(encodeNode).join(',')}]}\n`);
}

async function save(writer: PackWriter, repo: Repository, type: 'data' | 'tree', bytes: Uint8Array): Promise<ID> {
  const id = hashID(bytes);
  if (writer.claim(type, id)) await writer.add(prepareBlob(repo.key, type, id, bytes, true), bytes.length);
  return id;
}

interface Hostile {
  name: string;
  /** the entry the errors must name, as they show it */
  entry: string;
  nodes: (ids: { data: ID }) => TreeNode[];
}

const file = (name: string, content: ID[] | null, extra: Partial<TreeNode> = {}): TreeNode =>
  newNode(Buffer.from(name), 'file', { mode: 0o644, size: content ? 6n : 0n, content, ...extra });

const cases: Hostile[] = [
  { name: 'a repeated name', entry: '"twice"', nodes: ({ data }) => [file('twice', [data]), file('twice', [data])] },
  { name: 'unsorted names', entry: '"a"', nodes: ({ data }) => [file('b', [data]), file('a', [data])] },
  { name: 'an empty name', entry: '""', nodes: ({ data }) => [file('', [data])] },
  { name: 'the name "."', entry: '"."', nodes: ({ data }) => [file('.', [data])] },
  { name: 'the name ".."', entry: '".."', nodes: ({ data }) => [file('..', [data])] },
  { name: 'a name holding a slash', entry: '"etc/passwd"', nodes: ({ data }) => [file('etc/passwd', [data])] },
  { name: 'a name holding a NUL byte', entry: '"x\\u0000y"', nodes: ({ data }) => [file('x\0y', [data])] },
  {
    name: 'a directory without a subtree',
    entry: '"d"',
    nodes: () => [newNode(Buffer.from('d'), 'dir', { mode: dirMode })],
  },
  { name: 'a file without a blob list', entry: '"f"', nodes: () => [file('f', null)] },
  {
    name: 'a file whose blob no index has',
    entry: '"f"',
    nodes: () => [file('f', [createHash('sha256').update('absent').digest('hex')])],
  },
];

/** A repository whose one snapshot holds `ok.txt` and folder `sub` at its root; `sub`'s tree is the hostile one. */
async function hostileRepo(c: Hostile, dir: string): Promise<{ hostile: ID; snapshot: ID }> {
  const repo = await Repository.init(new FsBackend(dir), testPassword, { kdf: testKDF });
  const writer = repo.writer();
  const data = await save(writer, repo, 'data', Buffer.from('hello\n'));
  const hostile = await save(writer, repo, 'tree', treeBytes(c.nodes({ data })));
  const root = await save(
    writer,
    repo,
    'tree',
    treeBytes([file('ok.txt', [data]), newNode(Buffer.from('sub'), 'dir', { mode: dirMode, subtree: hostile })]),
  );
  await writer.flush();
  const snapshot = await saveSnapshot(
    repo,
    newSnapshot(root, utcTime(1_700_000_000_000_000_000n), { paths: ['/'], hostname: 'test' }),
  );
  await repo.close();
  return { hostile, snapshot };
}

for (const [i, c] of cases.entries()) {
  test(`a tree with ${c.name}: check and restore fail naming the tree and the entry; the restore writes nothing`, async () => {
    const dir = join(work, `repo-${i}`);
    const { hostile, snapshot } = await hostileRepo(c, dir);

    const checked = await ferry(['repo', 'check', '-r', dir, '--json']);
    assert.equal(checked.code, 1, `check passed a tree with ${c.name}:\n${checked.stdout}${checked.stderr}`);
    assert.ok(!hasStackTrace(checked.stderr), checked.stderr);
    const { errors } = parseJSON<{ errors: string[] }>(checked);
    assert.ok(
      errors.some((e) => e.includes(hostile) && e.includes(`entry ${c.entry}`)),
      `no error names tree ${hostile} and entry ${c.entry}:\n${errors.join('\n')}`,
    );

    const target = join(work, `restored-${i}`);
    const restored = await ferry(['repo', 'restore', '-r', dir, snapshot, '--target', target]);
    assert.equal(restored.code, 1, `restore succeeded:\n${restored.stdout}${restored.stderr}`);
    assert.ok(!hasStackTrace(restored.stderr), restored.stderr);
    assert.ok(
      restored.stderr.includes(hostile) && restored.stderr.includes(c.entry),
      `the message does not name tree ${hostile} and entry ${c.entry}:\n${restored.stderr}`,
    );
    assert.deepEqual(await readdir(target).catch(() => []), [], 'the restore wrote nothing');
  });
}
