// pastTransfer, read by the dispatcher to free a transfer slot: true from the phase the transfer ends in onwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pastTransfer } from '../../../src/shared/api/phases.ts';
import type { Phase } from '../../../src/shared/api/types.ts';

test('only finalize or nothing is left past the transfer', () => {
  const past: Phase[] = ['Finalizing', 'Completed', 'Failing', 'Failed', 'Canceling', 'Canceled'];
  const before: Phase[] = ['New', 'Accepted', 'Prepared', 'InProgress'];
  for (const p of past) assert.equal(pastTransfer(p), true, p);
  for (const p of before) assert.equal(pastTransfer(p), false, p);
  assert.equal(pastTransfer(undefined), false, 'no phase yet');
});
