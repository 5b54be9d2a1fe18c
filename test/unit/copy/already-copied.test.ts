// A destination snapshot counts as a copy of a source snapshot as restic counts it: it carries the source's
// persistent id (as `original`, or as its own id) and agrees on everything but parent and original. Anything else,
// a snapshot rewritten since with other tags or another tree among them, is copied again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CopiedSnapshots, similar } from '../../../src/engine/copy/already-copied.ts';
import type { SnapshotEntry } from '../../../src/engine/snapshot/select.ts';
import { newSnapshot, type Snapshot } from '../../../src/engine/snapshot/snapshot.ts';

const id = (c: string) => c.repeat(64);
const base = newSnapshot(
  id('e'),
  { ns: 1_700_000_000_123_456_789n, offset: 0 },
  {
    paths: ['/a', '/b'],
    tags: ['x', 'y'],
    excludes: ['*.tmp', '*.log'],
    hostname: 'h',
    username: 'u',
    uid: 1,
    gid: 2,
  },
);
const shown = (f: object) => JSON.stringify(f, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
const entry = (sid: string, fields: Partial<Snapshot> = {}): SnapshotEntry => ({
  id: sid,
  snapshot: { ...base, ...fields },
});

test('copies agree on everything but parent, original and summary; paths and tags as sets, excludes in order', () => {
  const same: Partial<Snapshot>[] = [
    { parent: id('1') },
    { original: id('2') },
    { paths: ['/b', '/a'] },
    { tags: ['y', 'x'] },
    { time: { ns: base.time.ns, offset: 3600 } },
  ];
  for (const f of same) assert.ok(similar(base, { ...base, ...f }), shown(f));
  const different: Partial<Snapshot>[] = [
    { tree: id('f') },
    { time: { ns: base.time.ns + 1n, offset: 0 } },
    { hostname: 'g' },
    { username: 'v' },
    { uid: 0 },
    { gid: 0 },
    { paths: ['/a'] },
    { paths: ['/a', '/c'] },
    { tags: ['x'] },
    { tags: ['x', 'z'] },
    { excludes: ['*.log', '*.tmp'] },
    { excludes: [] },
  ];
  for (const f of different) assert.ok(!similar(base, { ...base, ...f }), shown(f));
});

test('a copy is found by its original, a shared snapshot file by its own id, and a rewrite is not a copy', () => {
  const source = entry(id('a'));
  const copies = new CopiedSnapshots([
    entry(id('c'), { original: id('a') }),
    entry(id('d'), { original: id('b'), tags: ['other'] }),
  ]);
  assert.equal(copies.copyOf(source)?.id, id('c'));
  // a source that is itself a copy carries the first original on
  assert.equal(copies.copyOf(entry(id('9'), { original: id('a') }))?.id, id('c'));
  // the same original, rewritten with other tags: copied again
  assert.equal(copies.copyOf(entry(id('b'))), undefined);
  assert.equal(new CopiedSnapshots([source]).copyOf(source)?.id, id('a'));
  const empty = new CopiedSnapshots([]);
  empty.record(source, entry(id('5'), { original: id('a') }));
  assert.equal(empty.copyOf(source)?.id, id('5'), 'a snapshot listed twice is copied once');
});
