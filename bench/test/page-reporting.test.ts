import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pausePageReporting } from '../measure/page-reporting.ts';

test('free page reporting is paused by an order no free block reaches, the free memory written, and its old order put back once', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-reporting-'));
  try {
    const param = join(dir, 'page_reporting_order');
    await writeFile(param, '9\n');
    let backed = 0;
    const pause = await pausePageReporting(param, () => backed++);
    assert.equal(await readFile(param, 'utf8'), '11');
    assert.equal(backed, 1, 'the free memory is written once reporting is paused');
    assert.match(pause.state, /paused for the run \(order 9 -> 11\)/);
    pause.resume();
    assert.equal(await readFile(param, 'utf8'), '9');
    // a second resume (the exit handler after an explicit one) does not write again
    await writeFile(param, '5');
    pause.resume();
    assert.equal(await readFile(param, 'utf8'), '5');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('without the parameter, or with one that does not read as an order, nothing is changed and the report says so', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-reporting-'));
  const back = () => assert.fail('free memory written with reporting still on');
  try {
    const missing = await pausePageReporting(join(dir, 'absent'), back);
    assert.equal(missing.state, 'no free page reporting on this machine');
    missing.resume();
    const odd = join(dir, 'odd');
    await writeFile(odd, 'on');
    const left = await pausePageReporting(odd, back);
    assert.match(left.state, /left on \(its order reads "on"\)/);
    assert.equal(await readFile(odd, 'utf8'), 'on');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
