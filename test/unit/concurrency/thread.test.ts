import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { startThread, startThreadAhead, stopSpareThread } from '../../../src/engine/concurrency/thread.ts';

const echo = new URL('./echo-thread.ts', import.meta.url);

async function ask(thread: Worker, msg: unknown): Promise<{ threadId: number; msg: unknown; cache: boolean }> {
  thread.postMessage(msg);
  const [reply] = await once(thread, 'message');
  return reply;
}

test('a thread runs its module with the compile cache on, and answers', async () => {
  const thread = startThread(echo, {});
  try {
    assert.deepEqual(await ask(thread, 'hi'), { threadId: thread.threadId, msg: 'hi', cache: true });
  } finally {
    await thread.terminate();
  }
});

test('a thread started ahead is the one the next start of its module takes; the start after that makes a new one', async () => {
  startThreadAhead(echo, {});
  startThreadAhead(echo, {}); // one spare per module, however often asked
  const first = startThread(echo, {});
  const second = startThread(echo, {});
  try {
    assert.notEqual(first.threadId, second.threadId);
    // the spare began before the second was made, so its id is lower
    assert.ok(first.threadId < second.threadId, `${first.threadId} vs ${second.threadId}`);
    assert.equal((await ask(first, 1)).threadId, first.threadId);
    assert.equal((await ask(second, 2)).threadId, second.threadId);
  } finally {
    await Promise.all([first.terminate(), second.terminate()]);
  }
});

test('a spare nothing took is stopped on request, and the next start makes a new thread', async () => {
  const before = startThread(echo, {});
  const id = before.threadId; // -1 once it has stopped
  await before.terminate();
  startThreadAhead(echo, {}); // thread ids count up: this one is id + 1
  await stopSpareThread(echo);
  const fresh = startThread(echo, {});
  try {
    assert.equal(fresh.threadId, id + 2);
    assert.equal((await ask(fresh, 'x')).threadId, fresh.threadId);
  } finally {
    await fresh.terminate();
  }
});

test('a spare thread does not keep the process alive', async () => {
  const script = `import { startThreadAhead } from ${JSON.stringify(new URL('../../../src/engine/concurrency/thread.ts', import.meta.url).href)};
startThreadAhead(new URL(${JSON.stringify(echo.href)}), {});`;
  // a thread keeping it alive would run into the timeout, which kills the child and fails the call
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
});
