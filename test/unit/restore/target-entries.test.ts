// What a restore does with what the target already holds: entries in the way are replaced, never followed or
// written through; a folder in the way of a non-folder is refused, naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  closeSync,
  constants,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeDescriptor } from '../../../src/engine/sys/beneath.ts';
import { createFile, makeFolder, makeHardLink, makeSymlinkEntry } from '../../../src/engine/restore/target-entries.ts';

const work = mkdtempSync(join(tmpdir(), 'ferry-entries-'));
test.after(() => rmSync(work, { recursive: true, force: true }));
const target = join(work, 'target');
const outside = join(work, 'outside');
mkdirSync(target);
mkdirSync(outside);
writeFileSync(join(outside, 'f'), 'outside\n');
const root = openSync(target, constants.O_RDONLY | constants.O_DIRECTORY);
test.after(() => closeSync(root));
const b = (s: string): Buffer => Buffer.from(s);

test('a symlink where a folder goes is replaced by the folder; what it pointed to is untouched', () => {
  symlinkSync(outside, join(target, 'a'));
  makeFolder(root, b('a'));
  assert.ok(lstatSync(join(target, 'a')).isDirectory());
  const fd = createFile(root, b('a/f'));
  writeSync(fd, 'restored\n');
  closeDescriptor(fd);
  assert.equal(readFileSync(join(outside, 'f'), 'utf8'), 'outside\n');
  makeFolder(root, b('a'));
  assert.equal(readFileSync(join(target, 'a', 'f'), 'utf8'), 'restored\n', 'an existing folder is kept');
});

test('a file is created afresh: a hard link to a file outside, a symlink or a fifo in its place is replaced', () => {
  linkSync(join(outside, 'f'), join(target, 'hard'));
  symlinkSync(join(outside, 'f'), join(target, 'sym'));
  execFileSync('mkfifo', [join(target, 'fifo')]);
  for (const name of ['hard', 'sym', 'fifo']) {
    const fd = createFile(root, b(name));
    writeSync(fd, `new ${name}\n`);
    closeDescriptor(fd);
    assert.ok(lstatSync(join(target, name)).isFile(), name);
    assert.equal(readFileSync(join(target, name), 'utf8'), `new ${name}\n`);
  }
  assert.equal(readFileSync(join(outside, 'f'), 'utf8'), 'outside\n');
  assert.equal(lstatSync(join(outside, 'f')).nlink, 1);
});

test('a folder where a file, symlink or link goes is refused, naming the entry', () => {
  mkdirSync(join(target, 'd'));
  writeFileSync(join(target, 'plain'), 'p');
  assert.throws(
    () => createFile(root, b('d')),
    /refusing to restore the file d: a folder of that name is already in the target/,
  );
  assert.throws(() => makeSymlinkEntry(root, b('d'), b('/etc')), /refusing to restore the symlink d: a folder/);
  assert.throws(() => makeHardLink(root, b('plain'), b('d')), /refusing to restore the hard link d: a folder/);
});

test('nothing is reached through a symlink in the middle of a path, a link source included', () => {
  symlinkSync(outside, join(target, 'via'));
  assert.throws(
    () => createFile(root, b('via/new')),
    /refusing to restore via\/new: a symlink or non-folder stands in its path/,
  );
  assert.throws(() => makeHardLink(root, b('via/f'), b('stolen')), /refusing to restore via\/f: a symlink/);
  assert.throws(() => makeFolder(root, b('via/sub')), /refusing to restore via\/sub/);
  assert.deepEqual(execFileSync('ls', [outside]).toString().trim().split('\n'), ['f']);
});
