// Snapshot files: the bytes restic writes (expected JSON derived by hand from Go's rules), round trips,
// and what older restic versions wrote.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { hexId, unicodeString } from '../tree/arbitrary.ts';
import { decodeSnapshot, encodeSnapshot, newSnapshot } from '../../../src/engine/snapshot/snapshot.ts';
import type { Snapshot } from '../../../src/engine/snapshot/snapshot.ts';

const idA = 'ab'.repeat(32);
const idB = 'cd'.repeat(32);
const t0 = 1700000000000000000n;
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

function handBuilt(): Snapshot {
  return newSnapshot(
    idA,
    { ns: t0 + 500000000n, offset: 3600 },
    {
      parent: idB,
      paths: ['/data'],
      hostname: 'node-1',
      username: 'root',
      tags: ['ns=<a>&b', 'pvc'],
      programVersion: 'ferry 0.1.0',
      summary: {
        backupStart: { ns: t0, offset: 3600 },
        backupEnd: { ns: t0 + 2_000_000_001n, offset: 3600 },
        filesNew: 1,
        filesChanged: 0,
        filesUnmodified: 0,
        dirsNew: 2,
        dirsChanged: 0,
        dirsUnmodified: 0,
        dataBlobs: 1,
        treeBlobs: 2,
        dataAdded: 100,
        dataAddedPacked: 90,
        totalFilesProcessed: 1,
        totalBytesProcessed: 100,
      },
    },
  );
}

test('encodes a snapshot to the bytes restic writes', () => {
  const expected =
    `{"time":"2023-11-14T23:13:20.5+01:00","parent":"${idB}","tree":"${idA}","paths":["/data"],"hostname":"node-1","username":"root",` +
    '"tags":["ns=\\u003ca\\u003e\\u0026b","pvc"],"program_version":"ferry 0.1.0","summary":{"backup_start":"2023-11-14T23:13:20+01:00",' +
    '"backup_end":"2023-11-14T23:13:22.000000001+01:00","files_new":1,"files_changed":0,"files_unmodified":0,"dirs_new":2,"dirs_changed":0,' +
    '"dirs_unmodified":0,"data_blobs":1,"tree_blobs":2,"data_added":100,"data_added_packed":90,"total_files_processed":1,"total_bytes_processed":100}}';
  assert.equal(text(encodeSnapshot(handBuilt())), expected);
  assert.deepEqual(decodeSnapshot(encodeSnapshot(handBuilt())), handBuilt());
});

test('leaves out empty optional fields as Go omitempty does', () => {
  const minimal = newSnapshot(idA, { ns: 0n, offset: 0 }, { paths: ['/'], uid: 1000, gid: 1000, excludes: ['*.tmp'] });
  assert.equal(
    text(encodeSnapshot(minimal)),
    `{"time":"1970-01-01T00:00:00Z","tree":"${idA}","paths":["/"],"uid":1000,"gid":1000,"excludes":["*.tmp"]}`,
  );
});

test('decodes what restic 0.14 wrote, ignoring unknown fields', () => {
  const old =
    `{"time":"2022-08-25T10:00:00.123456789+02:00","tree":"${idA.toUpperCase()}","paths":["/home/u"],"hostname":"h","username":"u",` +
    `"uid":1000,"gid":1000,"tags":null,"new_in_2030":{"x":[1]}}`;
  const sn = decodeSnapshot(bytes(old));
  assert.equal(sn.tree, idA);
  assert.equal(sn.time.offset, 7200);
  assert.deepEqual(sn.tags, []);
  assert.equal(sn.summary, null);
  assert.equal(sn.uid, 1000);
});

test('reports broken snapshots clearly', () => {
  assert.throws(() => decodeSnapshot(bytes('{"time":"2022-08-25T10:00:00Z","paths":[]}')), /snapshot has no tree id/);
  assert.throws(() => decodeSnapshot(bytes(`{"time":"yesterday","tree":"${idA}"}`)), /not in RFC 3339 format/);
  assert.throws(() => decodeSnapshot(bytes(`{"tree":"${idA}","parent":"abc"}`)), /"parent" holds "abc"/);
  assert.throws(() => decodeSnapshot(bytes(`{"tree":"${idA}"`)), /snapshot is not valid JSON/);
});

test('any snapshot survives encode and decode', () => {
  const time = fc.record(
    {
      ns: fc.bigInt({ min: 0n, max: 4102444800n * 1_000_000_000n }),
      offset: fc.integer({ min: -840, max: 840 }).map((m) => m * 60),
    },
    { noNullPrototype: true },
  );
  const str = unicodeString(10);
  const count = fc.nat({ max: Number.MAX_SAFE_INTEGER });
  const summary = fc.record(
    {
      backupStart: time,
      backupEnd: time,
      filesNew: count,
      filesChanged: count,
      filesUnmodified: count,
      dirsNew: count,
      dirsChanged: count,
      dirsUnmodified: count,
      dataBlobs: count,
      treeBlobs: count,
      dataAdded: count,
      dataAddedPacked: count,
      totalFilesProcessed: count,
      totalBytesProcessed: count,
    },
    { noNullPrototype: true },
  );
  const snapshot = fc.record(
    {
      time,
      parent: fc.option(hexId, { nil: null }),
      tree: hexId,
      paths: fc.array(str, { maxLength: 3 }),
      hostname: str,
      username: str,
      uid: fc.nat({ max: 0xffffffff }),
      gid: fc.nat({ max: 0xffffffff }),
      excludes: fc.array(str, { maxLength: 3 }),
      tags: fc.array(str, { maxLength: 3 }),
      original: fc.option(hexId, { nil: null }),
      programVersion: str,
      summary: fc.option(summary, { nil: null }),
    },
    { noNullPrototype: true },
  );
  fc.assert(
    fc.property(snapshot, (sn) => {
      const encoded = encodeSnapshot(sn);
      assert.deepEqual(decodeSnapshot(encoded), sn);
    }),
    { numRuns: 300 },
  );
});
