// lstatEntries stats a folder's entries from inside it; the caller must not be able to tell, except by speed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lstatEntries } from '../../../src/engine/fsmeta/lstat-entries.ts';

function fixture(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-lstat-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const sameStat = (a: ReturnType<typeof lstatSync>, b: ReturnType<typeof lstatSync>): void => {
  for (const k of ['ino', 'mode', 'size', 'mtimeNs', 'nlink'] as const)
    assert.equal((a as never)[k], (b as never)[k], k);
};

test('entries are stat-ed as by their full paths, symlinks not followed, missing ones undefined, and the cwd kept', (t) => {
  const dir = fixture(t);
  writeFileSync(join(dir, 'file'), 'data');
  mkdirSync(join(dir, 'sub'));
  symlinkSync('/nonexistent', join(dir, 'link'));
  const cwd = process.cwd();
  const names = ['file', 'gone', 'link', 'sub'].map((n) => Buffer.from(n));
  const got = lstatEntries(Buffer.from(dir), names);
  assert.equal(process.cwd(), cwd);
  assert.equal(got.length, 4);
  sameStat(got[0]!, lstatSync(join(dir, 'file'), { bigint: true }));
  assert.equal(got[1], undefined);
  assert.ok(got[2]!.isSymbolicLink());
  assert.ok(got[3]!.isDirectory());
  assert.equal(typeof got[0]!.mtimeNs, 'bigint');
});

test('a folder whose name is not UTF-8 (chdir takes strings) is left to full paths', (t) => {
  const dir = fixture(t);
  const odd = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x66, 0xff, 0x6f])]);
  mkdirSync(odd);
  writeFileSync(Buffer.concat([odd, Buffer.from('/x')]), 'abc');
  assert.deepEqual(lstatEntries(odd, [Buffer.from('x'), Buffer.from('y')]), [undefined, undefined]);
});

test('a folder that cannot be entered gives undefined for each entry, and the cwd is kept', (t) => {
  const dir = fixture(t);
  writeFileSync(join(dir, 'plain'), '');
  const cwd = process.cwd();
  assert.deepEqual(lstatEntries(Buffer.from(join(dir, 'plain')), [Buffer.from('a')]), [undefined]);
  assert.deepEqual(lstatEntries(Buffer.from(join(dir, 'missing')), [Buffer.from('a')]), [undefined]);
  assert.equal(process.cwd(), cwd);
});
