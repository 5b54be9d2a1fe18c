// Names of what a schedule makes: deterministic, within Kubernetes' limits, distinct for distinct inputs.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  cronJobName,
  jitterDelay,
  runID,
  runUploadName,
  scheduleLabel,
  scheduledTimeOfJob,
} from '../../../src/shared/schedule/names.ts';
import { matchesSelector } from '../../../src/shared/schedule/selector.ts';
import { dnsSubdomain, subdomainNames } from '../../support/object-names.ts';

const labelPattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** Schedule and PVC names as Kubernetes allows them: DNS-1123 subdomains of up to 253 characters. */
const name = subdomainNames(6, 62);

it('DataUpload and CronJob names stay within 253 and 52 characters, valid and distinct; the schedule label within 63', () => {
  fc.assert(
    fc.property(name, name, fc.integer({ min: 0, max: 4_000_000_000 }), (schedule, pvc, minutes) => {
      const run = runID(minutes * 60_000);
      const du = runUploadName(schedule, pvc, run);
      assert.ok(du.length <= 253 && dnsSubdomain.test(du) && du.endsWith(`-${run}`), du);
      if (schedule.length + pvc.length + run.length + 2 <= 253)
        assert.equal(du, `${schedule}-${pvc}-${run}`, 'a name that fits is kept whole');
      assert.equal(runUploadName(schedule, pvc, run), du);
      const cron = cronJobName(schedule);
      assert.ok(cron.length <= 52 && dnsSubdomain.test(cron), cron);
      const label = scheduleLabel(schedule);
      assert.ok(label.length <= 63 && labelPattern.test(label), label);
    }),
    { seed: 3, numRuns: 300 },
  );
  const long = 's'.repeat(200);
  assert.notEqual(
    runUploadName(long, `${'p'.repeat(60)}a`, '202501010000'),
    runUploadName(long, `${'p'.repeat(60)}b`, '202501010000'),
  );
  assert.notEqual(scheduleLabel(`${'s'.repeat(63)}a`), scheduleLabel(`${'s'.repeat(63)}b`));
  assert.notEqual(cronJobName(`${'s'.repeat(63)}a`), cronJobName(`${'s'.repeat(63)}b`));
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
  assert.equal(
    matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold', 'silver'] }] }, labels),
    true,
  );
  assert.equal(
    matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] }, labels),
    false,
  );
  assert.equal(
    matchesSelector({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels),
    true,
  );
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, labels), false);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, labels), true);
});
