// listNames reads names as strings for speed; the names it returns must be the bytes on disk, in byte-wise order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listNames } from '../../../src/engine/fsmeta/list-names.ts';

function fixture(t: { after(fn: () => void): void }, names: Buffer[]): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-names-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const n of names) writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), n]), '');
  return Buffer.from(dir);
}

const onDisk = (dir: Buffer): string[] =>
  readdirSync(dir, { encoding: 'buffer' })
    .map((n) => n.toString('hex'))
    .sort();
const hex = (names: Uint8Array[]): string[] => names.map((n) => Buffer.from(n).toString('hex'));

test('UTF-8 names come back as their bytes, sorted byte-wise (not by UTF-16 code units)', (t) => {
  // U+FF61 sorts before U+1F600 by bytes (EF.. < F0..) but after it by UTF-16 units (FF61 > D83D)
  const names = ['b', 'a', 'Z', 'é', '\u{1F600}', '\uFF61', 'a b', 'x'.repeat(200)].map((s) => Buffer.from(s));
  const dir = fixture(t, names);
  const got = listNames(dir);
  assert.deepEqual([...hex(got)].sort(), onDisk(dir));
  assert.deepEqual(
    hex(got),
    [...names].sort(Buffer.compare).map((n) => n.toString('hex')),
  );
});

test('a name that is not UTF-8, or that holds U+FFFD itself, is kept byte for byte', (t) => {
  const names = [
    Buffer.from([0x66, 0xff, 0x67]),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from('\uFFFD'),
    Buffer.from('plain'),
  ];
  const dir = fixture(t, names);
  const got = listNames(dir);
  assert.deepEqual(
    hex(got),
    [...names].sort(Buffer.compare).map((n) => n.toString('hex')),
  );
});

test('an empty folder has no names', (t) => {
  assert.deepEqual(listNames(fixture(t, [])), []);
});
