// The retry wrapper against a backend that fails on command.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { PermanentError } from '../../../src/engine/backend/backend.ts';
import type { Backend, FileInfo, FileType, Handle } from '../../../src/engine/backend/backend.ts';
import { NotExistError } from '../../../src/engine/backend/errors.ts';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { RetryBackend } from '../../../src/engine/backend/retry.ts';
import type { RetryInfo, RetryOptions } from '../../../src/engine/backend/retry.ts';
import { handle } from './contract.ts';

function networkError(): Error {
  return Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
}

/** A MemBackend whose load fails with the queued errors first, and whose list can break after some entries. */
class FlakyBackend extends MemBackend {
  loadErrors: unknown[] = [];
  loadCalls = 0;
  listBreaksAfter: number[] = [];

  override async load(h: Handle, offset?: number, length?: number, signal?: AbortSignal): Promise<Uint8Array> {
    this.loadCalls++;
    if (this.loadErrors.length > 0) throw this.loadErrors.shift();
    return super.load(h, offset, length, signal);
  }

  override async *list(type: FileType, signal?: AbortSignal): AsyncIterable<FileInfo> {
    const breakAfter = this.listBreaksAfter.shift();
    let n = 0;
    for await (const info of super.list(type, signal)) {
      if (n++ === breakAfter) throw networkError();
      yield info;
    }
  }
}

async function setup(
  opts: RetryOptions = {},
): Promise<{ flaky: FlakyBackend; retry: Backend; h: Handle; data: Uint8Array; retries: RetryInfo[] }> {
  const flaky = new FlakyBackend();
  const retries: RetryInfo[] = [];
  const retry = new RetryBackend(flaky, { initialDelayMs: 1, maxDelayMs: 4, onRetry: (i) => retries.push(i), ...opts });
  const h = handle('pack');
  const data = randomBytes(100);
  await flaky.save(h, data);
  return { flaky, retry, h, data, retries };
}

describe('retry backend', () => {
  it('retries transient failures until the operation succeeds', async () => {
    const { flaky, retry, h, data, retries } = await setup();
    flaky.loadErrors = [networkError(), Object.assign(new Error('SlowDown'), { $metadata: { httpStatusCode: 503 } })];
    assert.deepEqual(Buffer.from(await retry.load(h)), data);
    assert.equal(flaky.loadCalls, 3);
    assert.deepEqual(
      retries.map((r) => [r.operation, r.attempt]),
      [
        [`load pack ${h.name}`, 1],
        [`load pack ${h.name}`, 2],
      ],
    );
  });

  for (const [label, error] of [
    ['permanent errors', new PermanentError('Bucket "x" does not exist at http://s3.')],
    ['missing files', new NotExistError('mem:', handle('pack'))],
    ['programming errors', new TypeError('x is not a function')],
  ] as const) {
    it(`does not retry ${label}`, async () => {
      const { flaky, retry, h } = await setup();
      flaky.loadErrors = [error];
      await assert.rejects(retry.load(h), (err) => err === error);
      assert.equal(flaky.loadCalls, 1);
    });
  }

  it('gives up after the configured number of attempts with the last error', async () => {
    const { flaky, retry, h } = await setup({ attempts: 4 });
    const errors = Array.from({ length: 10 }, networkError);
    flaky.loadErrors = [...errors];
    await assert.rejects(retry.load(h), (err) => err === errors[3]);
    assert.equal(flaky.loadCalls, 4);
  });

  it('starts no attempt past the time budget', async () => {
    const { flaky, retry, h } = await setup({ initialDelayMs: 40, maxDelayMs: 40, maxElapsedMs: 100, random: () => 1 });
    flaky.loadErrors = Array.from({ length: 10 }, networkError);
    const started = performance.now();
    await assert.rejects(retry.load(h), /ECONNRESET/);
    assert.ok(flaky.loadCalls >= 2 && flaky.loadCalls <= 3, `calls ${flaky.loadCalls}`);
    assert.ok(performance.now() - started < 150);
  });

  it('backs off exponentially up to the cap, scaled by the jitter', async () => {
    const { flaky, retry, h, retries } = await setup({ initialDelayMs: 1, maxDelayMs: 8, random: () => 0.5 });
    flaky.loadErrors = Array.from({ length: 6 }, networkError);
    await retry.load(h);
    assert.deepEqual(
      retries.map((r) => r.delayMs),
      [1, 1, 2, 4, 4, 4],
    );
  });

  it('stops waiting as soon as the signal aborts', async () => {
    const { flaky, retry, h } = await setup({ initialDelayMs: 60_000, maxDelayMs: 60_000, random: () => 1 });
    flaky.loadErrors = Array.from({ length: 10 }, networkError);
    const ac = new AbortController();
    const started = performance.now();
    setTimeout(() => ac.abort(), 20);
    await assert.rejects(retry.load(h, 0, 0, ac.signal), { name: 'AbortError' });
    assert.equal(flaky.loadCalls, 1);
    assert.ok(performance.now() - started < 1000);
  });

  it('restarts a listing that broke part-way and hands out each file once', async () => {
    const { flaky, retry, retries } = await setup();
    for (let i = 0; i < 9; i++) await flaky.save(handle('pack'), randomBytes(1));
    flaky.listBreaksAfter = [3, 7];
    const names: string[] = [];
    for await (const info of retry.list('pack')) names.push(info.name);
    assert.equal(names.length, 10);
    assert.equal(new Set(names).size, 10);
    assert.equal(retries.length, 2);
  });
});
