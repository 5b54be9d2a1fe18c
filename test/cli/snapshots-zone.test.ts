// `ferry repo snapshots` shows times in the local zone (TZ), as restic does, whatever zone the backup recorded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { ferryOK } from '../support/ferry-cli.ts';
import { RawTreeWriter } from '../support/hostile-repo.ts';
import { testRepo } from '../support/repo.ts';

test('snapshot times are listed in the zone TZ names', async () => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-zone-'));
  try {
    const repo = await testRepo(new FsBackend(work));
    const w = new RawTreeWriter(repo);
    // recorded as 2023-11-14 22:13:20 UTC
    await w.snapshot(await w.tree([]));
    for (const [zone, shown] of [
      ['Asia/Tokyo', '2023-11-15 07:13:20'],
      ['America/New_York', '2023-11-14 17:13:20'],
      ['UTC', '2023-11-14 22:13:20'],
    ]) {
      const r = await ferryOK(['repo', 'snapshots', '-r', work], { env: { TZ: zone } });
      assert.match(r.stdout, new RegExp(shown), `${zone}: ${r.stdout}`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
