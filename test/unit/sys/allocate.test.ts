// Preallocation as the restore uses it: ranges reserved without changing the size, never more than the file system
// has free (a repository's lengths may lie, and fallocate allocates as it goes), and zeros punched back to holes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, fstatSync, ftruncateSync, openSync, statfsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeBytes, preallocate, punchHole } from '../../../src/engine/sys/allocate.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-allocate-'));
test.after(() => rm(work, { recursive: true, force: true }));

const MiB = 1 << 20;

test('ranges are reserved without changing the size, and a punched range is a hole again', () => {
  const fd = openSync(join(work, 'reserved'), 'w');
  try {
    assert.equal(
      preallocate(fd, [
        { offset: 0, length: MiB },
        { offset: 3 * MiB, length: MiB },
      ]),
      true,
    );
    assert.equal(fstatSync(fd).size, 0);
    assert.equal(fstatSync(fd).blocks * 512, 2 * MiB, 'the gap between the ranges was reserved, or a range was not');
    // a hole is punched only below the file's end
    punchHole(fd, 256 << 10, 256 << 10);
    assert.equal(fstatSync(fd).blocks * 512, 2 * MiB);
  } finally {
    closeSync(fd);
  }
  const sized = openSync(join(work, 'sized'), 'w');
  try {
    preallocate(sized, [{ offset: 0, length: MiB }]);
    // as the restore does once it has reserved: the file has its size, so holes can be punched anywhere in it
    ftruncateSync(sized, 4 * MiB);
    punchHole(sized, 256 << 10, 256 << 10);
    assert.equal(fstatSync(sized).blocks * 512, MiB - (256 << 10));
  } finally {
    closeSync(sized);
  }
});

test('nothing is reserved when the ranges exceed the free space, which is read from the file system', () => {
  const fd = openSync(join(work, 'too-much'), 'w');
  try {
    const st = statfsSync(work);
    const free = freeBytes(fd);
    // other writers on the machine move it a little between the two looks
    assert.ok(
      Math.abs(free - st.bavail * st.bsize) < 256 * MiB,
      `fstatfs says ${free}, statfs ${st.bavail * st.bsize}`,
    );
    // the free space is given, so that a broken check cannot fill the machine's disk
    assert.equal(preallocate(fd, [{ offset: 0, length: 2 * MiB }], MiB), false);
    assert.equal(fstatSync(fd).blocks, 0, 'a reservation past the free space was made');
    assert.equal(preallocate(fd, [{ offset: 0, length: 2 * MiB }], 4 * MiB), true);
    assert.equal(fstatSync(fd).blocks * 512, 2 * MiB);
  } finally {
    closeSync(fd);
  }
});
