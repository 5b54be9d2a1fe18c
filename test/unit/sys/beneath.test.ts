// openBeneath: no symlink is followed and nothing outside the folder is reached, through openat2 and through the
// component walk used where seccomp refuses openat2, on the main thread and in a worker thread (where the
// restore's small-file thread uses it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { closeDescriptor, openBeneath, useComponentWalk } from '../../../src/engine/sys/beneath.ts';

const work = mkdtempSync(join(tmpdir(), 'ferry-beneath-'));
test.after(() => rmSync(work, { recursive: true, force: true }));
mkdirSync(join(work, 'root', 'dir'), { recursive: true });
mkdirSync(join(work, 'outside'));
writeFileSync(join(work, 'outside', 'secret'), 'outside\n');
symlinkSync(join(work, 'outside'), join(work, 'root', 'abs'));
symlinkSync('../outside', join(work, 'root', 'rel'));
symlinkSync('dir', join(work, 'root', 'inside'));
const root = openSync(join(work, 'root'), constants.O_RDONLY | constants.O_DIRECTORY);
test.after(() => closeSync(root));

const refused: [string, RegExp][] = [
  ['abs/secret', /ELOOP|ENOTDIR/],
  ['rel/secret', /ELOOP|ENOTDIR/],
  ['abs', /ELOOP/],
  ['inside/x', /ELOOP|ENOTDIR/],
  ['../outside/secret', /EXDEV/],
  ['dir/../../outside/secret', /EXDEV/],
];

for (const walk of [false, true]) {
  test(`${walk ? 'the component walk' : 'openat2'} refuses every symlink and every way out, and creates below`, () => {
    useComponentWalk(walk);
    try {
      for (const [path, code] of refused) {
        assert.throws(
          () => openBeneath(root, Buffer.from(path), constants.O_WRONLY | constants.O_CREAT, 0o600),
          code,
          path,
        );
      }
      const fd = openBeneath(
        root,
        Buffer.from('dir/new'),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
        0o600,
      );
      closeDescriptor(fd);
      assert.equal(readFileSync(join(work, 'root', 'dir', 'new'), 'utf8'), '');
      rmSync(join(work, 'root', 'dir', 'new'));
      assert.equal(readFileSync(join(work, 'outside', 'secret'), 'utf8'), 'outside\n');
    } finally {
      useComponentWalk(false);
    }
  });
}

test('a worker thread loads the calls itself and gets the same refusals', async () => {
  const code = `
    import { workerData, parentPort } from 'node:worker_threads';
    import { constants } from 'node:fs';
    const { openBeneath, closeDescriptor } = await import(workerData.module);
    const out = [];
    for (const p of workerData.paths) {
      try { closeDescriptor(openBeneath(workerData.root, Buffer.from(p), constants.O_RDONLY)); out.push('opened'); }
      catch (err) { out.push(err.code); }
    }
    parentPort.postMessage(out);`;
  const module = new URL('../../../src/engine/sys/beneath.ts', import.meta.url).href;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), {
    workerData: { module, root, paths: ['abs/secret', 'rel/secret', 'dir'] },
  });
  const [answer] = await Promise.all([
    new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject)),
  ]);
  await worker.terminate();
  assert.deepEqual(answer, ['ELOOP', 'ELOOP', 'opened']);
});
