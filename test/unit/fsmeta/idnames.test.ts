import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { IdNames } from '../../../src/engine/fsmeta/idnames.ts';

test('names ids from passwd and group files, first entry winning', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-idnames-'));
  try {
    await writeFile(
      join(dir, 'passwd'),
      '# comment\nroot:x:0:0:root:/root:/bin/bash\ntoor:x:0:0::/:/bin/sh\n+nis\nalice:x:1000:1000::/home/alice:/bin/sh\nbroken:x\n',
    );
    await writeFile(join(dir, 'group'), 'root:x:0:\nstaff:x:50:alice,bob\n');
    const names = await IdNames.load(join(dir, 'passwd'), join(dir, 'group'));
    assert.equal(names.user(0), 'root');
    assert.equal(names.user(1000), 'alice');
    assert.equal(names.user(4242), '');
    assert.equal(names.group(50), 'staff');
    assert.equal(names.group(1000), '');
    const none = await IdNames.load(join(dir, 'missing-passwd'), join(dir, 'missing-group'));
    assert.equal(none.user(0), '');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
