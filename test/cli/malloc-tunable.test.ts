// The command runs with malloc's mmap threshold fixed and two arenas (see src/entry/ferry.mjs), keeping tunables the
// caller set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../../src/entry/ferry.mjs', import.meta.url));
// runs before the entry in each process the command starts as, and reports the tunables that process had
const probe = `data:text/javascript,process.stderr.write('tunables=' + process.env.GLIBC_TUNABLES + ' pid=' + process.pid + '\\n')`;

function run(env: NodeJS.ProcessEnv): { lines: string[]; status: number | null } {
  const r = spawnSync(process.execPath, ['--import', probe, entry, '--help'], { env, encoding: 'utf8' });
  return { lines: r.stderr.split('\n').filter((l) => l.startsWith('tunables=')), status: r.status };
}

test('ferry starts itself again, once and in the same process, with the mmap threshold and arenas set', () => {
  const { GLIBC_TUNABLES: _, ...env } = process.env;
  const r = run(env);
  assert.equal(r.status, 0);
  assert.equal(r.lines.length, 2);
  assert.match(r.lines[0], /^tunables=undefined /);
  assert.match(
    r.lines[1],
    /^tunables=glibc\.malloc\.mmap_threshold=4194304:glibc\.malloc\.arena_max=2:glibc\.malloc\.hugetlb=1 /,
  );
  assert.equal(r.lines[0].split(' pid=')[1], r.lines[1].split(' pid=')[1], 'execve keeps the process');
});

test('tunables the caller set are kept, and values the caller chose are left alone', () => {
  const added = run({ ...process.env, GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0' });
  assert.equal(
    added.lines.at(-1)?.split(' ')[0],
    'tunables=glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=4194304:glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1',
  );
  const threshold = run({ ...process.env, GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=1048576' });
  assert.equal(
    threshold.lines.at(-1)?.split(' ')[0],
    'tunables=glibc.malloc.mmap_threshold=1048576:glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1',
  );
  const both = run({
    ...process.env,
    GLIBC_TUNABLES: 'glibc.malloc.arena_max=8:glibc.malloc.mmap_threshold=1048576:glibc.malloc.hugetlb=0',
  });
  assert.deepEqual(
    both.lines.map((l) => l.split(' ')[0]),
    ['tunables=glibc.malloc.arena_max=8:glibc.malloc.mmap_threshold=1048576:glibc.malloc.hugetlb=0'],
  );
});
