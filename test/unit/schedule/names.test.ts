// Names of what a schedule makes: deterministic, within Kubernetes' limits, distinct for distinct inputs.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cronJobName, jitterDelay, runID, runUploadName, scheduledTimeOfJob } from '../../../src/shared/schedule/names.ts';
import { matchesSelector } from '../../../src/shared/schedule/selector.ts';

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);

it('DataUpload and CronJob names stay within 63 and 52 characters, valid and distinct', () => {
  fc.assert(fc.property(name, name, fc.integer({ min: 0, max: 4_000_000_000 }), (schedule, pvc, minutes) => {
    const run = runID(minutes * 60_000);
    const du = runUploadName(schedule, pvc, run);
    assert.ok(du.length <= 63 && dnsLabel.test(du) && du.endsWith(`-${run}`), du);
    assert.equal(runUploadName(schedule, pvc, run), du);
    const cron = cronJobName(schedule);
    assert.ok(cron.length <= 52 && dnsLabel.test(cron), cron);
  }), { seed: 3, numRuns: 300 });
  assert.notEqual(runUploadName('s'.repeat(40), `${'p'.repeat(30)}a`, '202501010000'), runUploadName('s'.repeat(40), `${'p'.repeat(30)}b`, '202501010000'));
});

it('the scheduled minute comes back from a CronJob Job name; a Job made by hand has none', () => {
  assert.equal(scheduledTimeOfJob('ferry-schedule-nightly-29012345'), 29012345 * 60_000);
  assert.equal(scheduledTimeOfJob('manual-run'), undefined);
  assert.equal(runID(Date.parse('2025-03-01T10:05:00Z')), '202503011005');
});

it('jitter is stable per run and below the bound', () => {
  const d = jitterDelay('uid', '202503011005', 300_000);
  assert.equal(jitterDelay('uid', '202503011005', 300_000), d);
  assert.ok(d >= 0 && d < 300_000);
  assert.equal(jitterDelay('uid', '202503011005', 0), 0);
});

it('label selectors: matchLabels and every operator', () => {
  const labels = { app: 'db', tier: 'gold' };
  assert.equal(matchesSelector({ matchLabels: { app: 'db' } }, labels), true);
  assert.equal(matchesSelector({ matchLabels: { app: 'web' } }, labels), false);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold', 'silver'] }] }, labels), true);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] }, labels), false);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels), true);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, labels), false);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, labels), true);
});
