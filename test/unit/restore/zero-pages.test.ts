// A restored blob is split into the runs to write and the whole zero pages (aligned to the file) left as holes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pageRuns } from '../../../src/engine/restore/zero-pages.ts';

const page = 4096;

function blob(pages: ('data' | 'zero')[]): Uint8Array {
  return Buffer.concat(pages.map((p) => new Uint8Array(page).fill(p === 'data' ? 1 : 0)));
}

test('whole zero pages aligned to the file are holes; data, and zero bytes short of a page, are written', () => {
  const cases: { name: string; data: Uint8Array; offset: number; want: ReturnType<typeof pageRuns> }[] = [
    { name: 'all data', data: blob(['data', 'data']), offset: 0, want: { data: [[0, 2 * page]], holes: [] } },
    { name: 'all zeros', data: blob(['zero', 'zero']), offset: 0, want: { data: [], holes: [[0, 2 * page]] } },
    {
      name: 'a hole between data',
      data: blob(['data', 'zero', 'zero', 'data']),
      offset: 8 * page,
      want: {
        data: [
          [0, page],
          [3 * page, 4 * page],
        ],
        holes: [[page, 3 * page]],
      },
    },
    {
      // the blob starts 100 bytes into a page: its first 3996 bytes are that page's tail, written even when zero
      name: 'a blob not aligned to the file',
      data: Buffer.concat([new Uint8Array(page - 100), blob(['zero', 'data'])]),
      offset: 100,
      want: {
        data: [
          [0, page - 100],
          [2 * page - 100, 3 * page - 100],
        ],
        holes: [[page - 100, 2 * page - 100]],
      },
    },
    {
      name: 'a short tail of zeros',
      data: Buffer.concat([blob(['data']), new Uint8Array(10)]),
      offset: 0,
      want: { data: [[0, page + 10]], holes: [] },
    },
    { name: 'nothing', data: new Uint8Array(0), offset: 0, want: { data: [], holes: [] } },
  ];
  for (const c of cases) assert.deepEqual(pageRuns(c.data, c.offset), c.want, c.name);
});
