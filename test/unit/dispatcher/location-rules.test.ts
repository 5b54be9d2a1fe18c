// A storage location's Object Lock and backup sync at admission, with forged reviews: a mode S3 knows, a retention
// from 1s to 36500d (the --object-lock rule), not both objectLock and recoverVersions, a backup sync schedule cron
// can run; each refusal names the field and starts no maintenance reconcile. Locations outside ferry's namespace
// and changes that leave the spec alone are not judged.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { allowed, denied } from './verdicts.ts';
import { location, review, world } from './world.ts';

function withSpec(extra: Record<string, unknown>, namespace?: string): KubeObject {
  const l = location('immutable', ['app']);
  return {
    ...l,
    metadata: {
      ...l.metadata,
      uid: 'a0a0a0a0-0000-4000-8000-000000000000',
      generation: 1,
      ...(namespace ? { namespace } : {}),
    },
    spec: { ...(l.spec as Record<string, unknown>), ...extra },
  };
}

const create = (extra: Record<string, unknown>, namespace?: string): AdmissionReview =>
  review('CREATE', withSpec(extra, namespace), { dryRun: true });

const lock = (mode: string, retention: string) => ({ objectLock: { mode, retention } });

describe('BackupStorageLocation admission', () => {
  it('admits Object Lock at the ends of its range, recoverVersions alone and a backup sync', async () => {
    const w = world();
    for (const extra of [
      lock('GOVERNANCE', '1s'),
      lock('COMPLIANCE', '36500d'),
      lock('COMPLIANCE', '876000h'),
      lock('GOVERNANCE', '30d'),
      { recoverVersions: true, backupSync: { schedule: '*/5 * * * *', suspend: false } },
      { ...lock('GOVERNANCE', '720h'), recoverVersions: false, backupSync: {} },
    ])
      await allowed(w, create(extra));
  });

  it('refuses another mode and a retention out of range, naming the field and what is allowed', async () => {
    const w = world();
    for (const [extra, pattern] of [
      [lock('gov', '30d'), /^spec\.objectLock\.mode: must be one of GOVERNANCE, COMPLIANCE$/],
      [lock('governance', '30d'), /^spec\.objectLock\.mode: must be one of GOVERNANCE, COMPLIANCE$/],
      [lock('GOVERNANCE', '0s'), /^spec\.objectLock\.retention: "0s" must be a period from 1s to 36500d/],
      [lock('GOVERNANCE', '999ms'), /^spec\.objectLock\.retention: "999ms" must be a period from 1s to 36500d/],
      [lock('GOVERNANCE', '36501d'), /^spec\.objectLock\.retention: "36501d" must be a period from 1s to 36500d/],
      [lock('GOVERNANCE', '876001h'), /^spec\.objectLock\.retention: "876001h" must be a period from 1s to 36500d/],
      [lock('GOVERNANCE', '30 days'), /^spec\.objectLock\.retention: must be a period such as '30d'/],
      [lock('GOVERNANCE', '1w'), /^spec\.objectLock\.retention: must be a period such as '30d'/],
      [{ objectLock: { mode: 'GOVERNANCE' } }, /^spec\.objectLock\.retention: is required$/],
      [
        { ...lock('COMPLIANCE', '30d'), recoverVersions: true },
        /^spec\.recoverVersions: cannot be set with spec\.objectLock/,
      ],
      [{ recoverVersions: 'yes' }, /^spec\.recoverVersions: must be true or false$/],
      [{ backupSync: { schedule: '61 * * * *' } }, /^spec\.backupSync\.schedule: /],
      [{ backupSync: { schedule: 'every minute' } }, /^spec\.backupSync\.schedule: must be a cron schedule/],
      [{ backupSync: { suspend: 1 } }, /^spec\.backupSync\.suspend: must be true or false$/],
    ] as const) {
      const from = w.kube.actions.length;
      await denied(w, review('CREATE', withSpec(extra)), pattern);
      await w.settle();
      assert.deepEqual(w.kube.actions.slice(from), [], 'a refused location sets nothing off');
    }
  });

  it('judges a new spec on update, lets a change that leaves it alone through, and leaves other namespaces alone', async () => {
    const w = world();
    const bad = withSpec(lock('GOVERNANCE', '0s'));
    await denied(w, review('UPDATE', bad, { old: withSpec({}), dryRun: true }), /^spec\.objectLock\.retention: "0s"/);
    const relabelled = { ...bad, metadata: { ...bad.metadata, labels: { team: 'ops' } } };
    await allowed(w, review('UPDATE', relabelled, { old: bad, dryRun: true }));
    await allowed(w, review('UPDATE', bad, { old: bad, subResource: 'status', dryRun: true }));
    await allowed(w, create(lock('GOVERNANCE', '0s'), 'elsewhere'));
  });
});
