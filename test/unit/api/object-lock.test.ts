// One rule for an Object Lock period, wherever a user writes one (--object-lock MODE:PERIOD, spec.objectLock).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseObjectLock, retentionMs } from '../../../src/shared/api/object-lock.ts';

const day = 86_400_000;

describe('retentionMs', () => {
  it('takes whole days and Go durations from 1s to 36500d', () => {
    assert.equal(retentionMs('1s'), 1000);
    assert.equal(retentionMs('30d'), 30 * day);
    assert.equal(retentionMs('30D'), 30 * day);
    assert.equal(retentionMs('12h'), 12 * 3_600_000);
    assert.equal(retentionMs('1h30m'), 5_400_000);
    assert.equal(retentionMs('36500d'), 36500 * day);
    assert.equal(retentionMs(`${36500 * 24}h`), 36500 * day);
  });

  it('refuses what is not a period or is out of range', () => {
    for (const bad of [
      '0s',
      '0',
      '999ms',
      '36501d',
      `${36500 * 24 + 1}h`,
      '',
      'd',
      '1.5d',
      '-1d',
      '30 d',
      '1w',
      '9'.repeat(400) + 'd',
    ])
      assert.equal(retentionMs(bad), undefined, bad);
  });
});

describe('parseObjectLock', () => {
  it('reads MODE:PERIOD with the mode in any case', () => {
    assert.deepEqual(parseObjectLock('governance:30d'), { mode: 'GOVERNANCE', retentionMs: 30 * day });
    assert.deepEqual(parseObjectLock('COMPLIANCE:1s'), { mode: 'COMPLIANCE', retentionMs: 1000 });
  });

  it('refuses another mode, a missing period or one out of range', () => {
    for (const bad of ['gov:30d', 'governance', 'governance:', 'governance:0s', 'compliance:36501d', ':30d'])
      assert.equal(parseObjectLock(bad), undefined, bad);
  });
});
