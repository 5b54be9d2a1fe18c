// Go's os.FileMode against Linux st_mode values (expected numbers derived from Go's documented bit layout).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  goMode,
  goModeFromPosix,
  nodeTypeFromGoMode,
  posixFromGoMode,
  posixPermissionsFromGoMode,
} from '../../../src/engine/tree/mode.ts';

test('maps each Linux file type and special bit to Go file mode bits', () => {
  assert.equal(goModeFromPosix(0o100644), 0o644);
  assert.equal(goModeFromPosix(0o104755), 0x800000 + 0o755); // setuid
  assert.equal(goModeFromPosix(0o102755), 0x400000 + 0o755); // setgid
  assert.equal(goModeFromPosix(0o041777), 0x80000000 + 0x100000 + 0o777); // sticky directory, like /tmp
  assert.equal(goModeFromPosix(0o120777), 134218239); // symlink
  assert.equal(goModeFromPosix(0o060660), 0x4000000 + 0o660); // block device
  assert.equal(goModeFromPosix(0o020666), 0x4000000 + 0x200000 + 0o666); // character device
  assert.equal(goModeFromPosix(0o010644), 0x2000000 + 0o644); // fifo
  assert.equal(goModeFromPosix(0o140755), 0x1000000 + 0o755); // socket
});

test('names node types as restic does', () => {
  const types = [
    [0o100644, 'file'],
    [0o040755, 'dir'],
    [0o120777, 'symlink'],
    [0o060660, 'dev'],
    [0o020666, 'chardev'],
    [0o010644, 'fifo'],
    [0o140755, 'socket'],
  ] as const;
  for (const [st, type] of types) assert.equal(nodeTypeFromGoMode(goModeFromPosix(st)), type);
  assert.equal(nodeTypeFromGoMode(goMode.irregular), 'irregular');
});

test('chmod bits keep permissions and setuid / setgid / sticky', () => {
  assert.equal(posixPermissionsFromGoMode(goModeFromPosix(0o107777)), 0o7777);
  assert.equal(posixPermissionsFromGoMode((goMode.dir | 0o755) >>> 0), 0o755);
});

test('st_mode survives the trip through Go file mode for every type and permission', () => {
  const types = [0o100000, 0o040000, 0o120000, 0o060000, 0o020000, 0o010000, 0o140000];
  fc.assert(
    fc.property(fc.constantFrom(...types), fc.nat({ max: 0o7777 }), (type, perm) => {
      assert.equal(posixFromGoMode(goModeFromPosix(type | perm)), type | perm);
    }),
  );
});
