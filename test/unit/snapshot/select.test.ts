import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AmbiguousSnapshotIDError,
  findLatest,
  matchesFilter,
  resolveSnapshotID,
  selectSnapshot,
  selectSnapshots,
  SnapshotNotFoundError,
} from '../../../src/engine/snapshot/select.ts';
import type { SnapshotEntry } from '../../../src/engine/snapshot/select.ts';
import { newSnapshot } from '../../../src/engine/snapshot/snapshot.ts';

const sec = (s: number): bigint => BigInt(s) * 1_000_000_000n;
const now = sec(1000);

function entry(
  id: string,
  at: number,
  fields: { hostname?: string; tags?: string[]; paths?: string[] } = {},
): SnapshotEntry {
  return {
    id: id.padEnd(64, '0'),
    snapshot: newSnapshot('ee'.repeat(32), { ns: sec(at), offset: 0 }, { paths: ['/data'], ...fields }),
  };
}

const entries = [
  entry('a1', 100, { hostname: 'n1', tags: ['pvc=db', 'ns=prod'] }),
  entry('a2', 300, { hostname: 'n2', tags: ['pvc=db', 'ns=test'] }),
  entry('b1', 200, { hostname: 'n1', tags: ['pvc=web'], paths: ['/data', '/logs'] }),
  entry('b2', 250, { hostname: 'n1' }),
  entry('c1', 2000, { hostname: 'n1', tags: ['pvc=db', 'ns=prod'] }), // from a writer whose clock runs ahead
];

test('finds the latest snapshot matching hosts, tags and paths', () => {
  assert.equal(findLatest(entries, {}, now).id.slice(0, 2), 'a2');
  assert.equal(findLatest(entries, { hosts: ['n1'] }, now).id.slice(0, 2), 'b2');
  assert.equal(findLatest(entries, { tags: [['pvc=db', 'ns=prod']] }, now).id.slice(0, 2), 'a1');
  assert.equal(findLatest(entries, { tags: [['pvc=web'], ['ns=test']] }, now).id.slice(0, 2), 'a2');
  assert.equal(findLatest(entries, { tags: [['']] }, now).id.slice(0, 2), 'b2');
  assert.equal(findLatest(entries, { paths: ['/logs/'] }, now).id.slice(0, 2), 'b1');
  assert.equal(findLatest(entries, { tags: [['pvc=db']] }, sec(3000)).id.slice(0, 2), 'c1');
});

test('breaks equal times by id so listing order does not matter', () => {
  const tie = [entry('f0', 10), entry('f1', 10)];
  assert.equal(findLatest(tie, {}, now).id, findLatest([...tie].reverse(), {}, now).id);
});

test('says which filter matched nothing', () => {
  assert.throws(
    () => findLatest(entries, { hosts: ['n9'], tags: [['x', 'y']] }, now),
    (err: Error) => {
      assert.ok(err instanceof SnapshotNotFoundError);
      assert.equal(err.message, 'no snapshot matches hosts n9; tags x+y');
      return true;
    },
  );
  assert.throws(() => matchesFilter(entries[0].snapshot, { paths: ['data'] }), /must be absolute/);
});

test('resolves id prefixes and names ambiguity', () => {
  const ids = entries.map((e) => e.id);
  assert.equal(resolveSnapshotID(ids, 'b2'), 'b2'.padEnd(64, '0'));
  assert.equal(resolveSnapshotID(ids, ids[0]), ids[0]);
  assert.throws(
    () => resolveSnapshotID(ids, 'a'),
    (err: Error) =>
      err instanceof AmbiguousSnapshotIDError &&
      err.message === 'snapshot id prefix "a" is ambiguous: it matches 2 snapshots (a1000000, a2000000)',
  );
  assert.throws(
    () => resolveSnapshotID(ids, 'd'),
    (err: Error) => err instanceof SnapshotNotFoundError && /no snapshot id starts with "d"/.test(err.message),
  );
  assert.throws(() => resolveSnapshotID(ids, 'latest!'), /not a snapshot id or id prefix/);
  assert.equal(selectSnapshot(entries, 'latest', { hosts: ['n1'] }, now).id.slice(0, 2), 'b2');
  assert.equal(selectSnapshot(entries, 'c1').id.slice(0, 2), 'c1');
});

test('several snapshots: the named ones whatever the filter, or every match of the filter; each once, in listing order', () => {
  const short = (list: SnapshotEntry[]) => list.map((e) => e.id.slice(0, 2));
  assert.deepEqual(short(selectSnapshots(entries, [], { hosts: ['n1'], tags: [['pvc=db']] }, now)), ['a1', 'c1']);
  assert.deepEqual(short(selectSnapshots(entries, [], {}, now)), ['a1', 'a2', 'b1', 'b2', 'c1']);
  assert.deepEqual(short(selectSnapshots(entries, ['b2', 'a2', 'b2'], { hosts: ['n9'] }, now)), ['a2', 'b2']);
  assert.deepEqual(short(selectSnapshots(entries, ['latest', 'a1'], { hosts: ['n1'] }, now)), ['a1', 'b2']);
  assert.throws(() => selectSnapshots(entries, ['a'], {}, now), AmbiguousSnapshotIDError);
});
