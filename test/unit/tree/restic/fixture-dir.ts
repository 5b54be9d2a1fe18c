// A directory holding what is hard to encode exactly: names and symlink targets that are not UTF-8 or
// need escaping, every node type, special mode bits, hard links, extended attributes, odd times.
import { execFileSync } from 'node:child_process';
import { chmod, chown, link, mkdir, symlink, utimes, writeFile } from 'node:fs/promises';

const isRoot = process.geteuid?.() === 0;

const awkwardNames: Buffer[] = [
  'a"b',
  'back\\slash',
  '<lt>&amp',
  'tab\tname',
  'nl\nname',
  'emoji😀',
  'sep\u2028',
  'soft\u00adhyphen',
  'ctl\x01',
  'del\x7f',
  'unicode16\u{10d40}',
  'nbsp\u00a0',
  'ü',
]
  .map((n) => Buffer.from(n, 'utf8'))
  .concat([Buffer.from('inv\x80alid', 'latin1'), Buffer.from('\xff\xfe', 'latin1')]);

function at(dir: string, name: Buffer | string): Buffer {
  return Buffer.concat([Buffer.from(`${dir}/`), typeof name === 'string' ? Buffer.from(name) : name]);
}

export async function makeFixtureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(at(dir, 'plain.txt'), 'hello\n');
  // created in name order: getfattr lists sorted, restic in the file system's (here: creation) order
  execFileSync('setfattr', ['-n', 'user.a', '-v', '1', `${dir}/plain.txt`]);
  execFileSync('setfattr', ['-n', 'user.b', '-v', '0x00ff', `${dir}/plain.txt`]);
  await writeFile(at(dir, 'empty'), '');
  await writeFile(at(dir, 'setuid'), '#!/bin/sh\n');
  await chmod(at(dir, 'setuid'), 0o4755);
  for (const name of awkwardNames) await writeFile(at(dir, name), name);
  await writeFile(at(dir, 'hard1'), 'linked');
  await link(at(dir, 'hard1'), at(dir, 'hard2'));
  await symlink('target/ü<>', at(dir, 'link-utf8'));
  await symlink(Buffer.from('t\x80', 'latin1'), at(dir, 'link-raw'));
  await mkdir(at(dir, 'sub'));
  await writeFile(at(dir, 'sub/inner.txt'), 'inner');
  await chmod(at(dir, 'sub'), 0o3775);
  execFileSync('mkfifo', [`${dir}/pipe`]);
  await writeFile(at(dir, 'old'), 'before 1970');
  // as strings: Node replaces a negative number of seconds with the current time
  await utimes(at(dir, 'old'), '-315619200.5', '-315619200.123456');
  await writeFile(at(dir, 'future'), 'after 2100');
  await utimes(at(dir, 'future'), 4102444800.25, 4102444800.75);
  if (isRoot) {
    execFileSync('mknod', [`${dir}/null-dev`, 'c', '1', '3']);
    await writeFile(at(dir, 'owned'), 'by nobody known');
    await chown(at(dir, 'owned'), 4242, 4343);
  }
}
