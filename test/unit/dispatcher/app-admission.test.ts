// The webhook on AppBackups and AppRestores, with hostile input: every denial names its field and says what is
// allowed; the spec stays as created but for cancel; a final phase stays final; a forged review starts nothing; a
// restore reads another namespace's backup only where the location allows it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import { checkSchedule } from '../../../src/dispatcher/schedule.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import type { Hook } from '../../../src/shared/api/app.ts';
import type { AppResource } from '../../../src/shared/app/jobs.ts';
import { appBackup, appRestore, appWorld } from './app-world.ts';
import { jobs, location, review } from './world.ts';
import type { World } from './world.ts';
import { allowed, denied } from './verdicts.ts';
import { nightlySchedule } from '../../support/backup-schedule.ts';

const hook = (extra: Partial<Hook> = {}): Hook => ({
  name: 'flush',
  selector: { matchLabels: { app: 'db' } },
  command: ['sync'],
  ...extra,
});

const create = (r: AppResource, dryRun = false): AdmissionReview => review('CREATE', r, { dryRun });

describe('AppBackup admission', () => {
  it('admits a valid AppBackup and, once stored, starts its step; a dry run starts nothing', async () => {
    const w = appWorld();
    const dry = appBackup('dry', undefined, { hooks: { pre: [hook()], post: [hook({ name: 'thaw' })] } });
    await allowed(w, create(dry, true));
    const ab = appBackup('db', undefined, { selector: { matchLabels: { app: 'db' } }, hooks: { pre: [hook()] } });
    await allowed(w, create(ab));
    w.kube.seed(ab);
    await w.settle();
    assert.deepEqual(
      jobs(w.kube).map((j) => (j.spec as any).template.spec.containers[0].args),
      [['app-backup', 'app/db']],
    );
  });

  it('refuses a backup of nothing, and selectors that select nothing or everything', async () => {
    const w = appWorld();
    await denied(w, create(appBackup('a', undefined, { pvcs: [] })), /^spec: name PVCs in spec.pvcs or select them/);
    await denied(w, create(appBackup('a', undefined, { pvcs: undefined, selector: {} })), /^spec: name PVCs/);
    await denied(
      w,
      create(appBackup('a', undefined, { hooks: { post: [hook({ selector: {} })] } })),
      /spec\.hooks\.post\[0\]\.selector: must pick pods/,
    );
    await denied(
      w,
      create(
        appBackup('a', undefined, {
          selector: { matchExpressions: [{ key: 'tier', operator: 'In' }] },
        }),
      ),
      /spec\.selector\.matchExpressions\[0\]\.values: must not be empty for In/,
    );
  });

  it('refuses oversize lists, naming the list and its limit', async () => {
    const w = appWorld();
    const many = (n: number) => Array.from({ length: n }, (_, i) => `pvc-${i}`);
    await denied(w, create(appBackup('a', undefined, { pvcs: many(257) })), /spec\.pvcs: must have at most 256 items/);
    const hooks = Array.from({ length: 33 }, (_, i) => hook({ name: `h${i}` }));
    await denied(
      w,
      create(appBackup('a', undefined, { hooks: { pre: hooks } })),
      /spec\.hooks\.pre: must have at most 32/,
    );
    const argv = Array.from({ length: 65 }, () => 'x');
    await denied(
      w,
      create(appBackup('a', undefined, { hooks: { pre: [hook({ command: argv })] } })),
      /spec\.hooks\.pre\[0\]\.command: must have at most 64 items/,
    );
    await denied(
      w,
      create(appBackup('a', undefined, { hooks: { pre: [hook({ command: [] })] } })),
      /spec\.hooks\.pre\[0\]\.command: must have at least 1 item/,
    );
    await denied(
      w,
      create(appBackup('a', undefined, { hooks: { post: [hook(), hook()] } })),
      /spec\.hooks\.post: must not repeat an item \(name="flush"/,
    );
    await denied(
      w,
      create(appBackup('a', undefined, { hooks: { pre: [hook({ name: 'Flush_DB' })] } })),
      /spec\.hooks\.pre\[0\]\.name: must be a DNS-1123 label/,
    );
  });

  it('refuses a hook named as the runs of spec.freeze are recorded', async () => {
    const w = appWorld();
    await denied(
      w,
      create(appBackup('a', undefined, { hooks: { post: [hook(), hook({ name: 'fsfreeze' })] } } as never)),
      /spec\.hooks\.post\[1\]\.name: "fsfreeze" names the runs of spec\.freeze/,
    );
  });

  it('refuses durations that are not Go durations or leave no time', async () => {
    const w = appWorld();
    for (const [spec, pattern] of [
      [{ hooks: { pre: [hook({ timeout: '30 seconds' })] } }, /spec\.hooks\.pre\[0\]\.timeout: must be a duration/],
      [{ hooks: { pre: [hook({ timeout: '0s' })] } }, /spec\.hooks\.pre\[0\]\.timeout: must be longer than 0/],
      [{ operationTimeout: '-1m' }, /spec\.operationTimeout: must be a duration/],
      [{ operationTimeout: '0m' }, /spec\.operationTimeout: must be longer than 0/],
      [{ expire: '7d' }, /spec\.expire: must be a duration/],
      [
        { hooks: { pre: [hook({ onError: 'Ignore' as never })] } },
        /spec\.hooks\.pre\[0\]\.onError: must be one of Fail, Continue/,
      ],
    ] as const)
      await denied(w, create(appBackup('a', undefined, spec as never)), pattern);
  });

  it('refuses a location that does not exist or does not let the namespace in', async () => {
    const w = appWorld();
    await denied(
      w,
      create(appBackup('a', undefined, { backupStorageLocation: 'nowhere' })),
      /spec\.backupStorageLocation: BackupStorageLocation "nowhere" does not exist/,
    );
    w.kube.seed(location('closed', ['other']));
    await denied(
      w,
      create(appBackup('a', undefined, { backupStorageLocation: 'closed' })),
      /spec\.backupStorageLocation: BackupStorageLocation "closed" does not allow namespace app/,
      403,
    );
  });

  it('keeps the spec as created: only cancel may be set, and never unset', async () => {
    const w = appWorld();
    const old = appBackup('db', 'Uploading', { hooks: { pre: [hook()] } });
    const next = (spec: object) => ({ ...old, spec: { ...old.spec, ...spec } });
    await denied(w, review('UPDATE', next({ pvcs: ['other'] }), { old }), /spec\.pvcs: cannot change after creation/);
    await denied(
      w,
      review('UPDATE', next({ hooks: { pre: [hook({ command: ['rm', '-rf', '/'] })] } }), { old }),
      /spec\.hooks: cannot change after creation/,
    );
    await allowed(w, review('UPDATE', next({ cancel: true }), { old }));
    const canceled = next({ cancel: true });
    await denied(w, review('UPDATE', next({ cancel: false }), { old: canceled }), /spec\.cancel: cannot be unset/);
  });

  it('checks status writes: valid fields, and a final phase stays final', async () => {
    const w = appWorld();
    const old = appBackup('db', 'Uploading');
    const status = (s: object, from = old) =>
      review('UPDATE', { ...from, status: s }, { old: from, subResource: 'status' });
    await allowed(w, status({ phase: 'UploadingPartialFailure', volumesDone: '1/2', bytesDone: 5 }));
    await denied(w, status({ phase: 'Done' }), /status\.phase: must be one of New, FailedValidation/);
    await denied(w, status({ phase: 'Uploading', volumesDone: 'all' }), /status\.volumesDone: must be two counts/);
    await denied(
      w,
      status({
        phase: 'Uploading',
        hooks: [
          {
            stage: 'pre',
            hook: 'x',
            pod: 'p',
            container: 'c',
            outcome: 'Succeeded',
            startTime: 'now',
            endTime: 'later',
          },
        ],
      }),
      /status\.hooks\[0\]\.startTime: must be an RFC 3339 timestamp/,
    );
    const completed = appBackup('done', 'Completed');
    await denied(
      w,
      status({ phase: 'InProgress' }, completed),
      /status\.phase: cannot change from Completed, which is final, to InProgress/,
    );
    const restore = appRestore('r', 'FailedValidation');
    await denied(
      w,
      review('UPDATE', { ...restore, status: { phase: 'Completed' } }, { old: restore, subResource: 'status' }),
      /status\.phase: cannot change from FailedValidation/,
    );
  });

  it('a forged review starts nothing: a creation nobody stored, a deletion of a finished backup', async () => {
    const w = appWorld();
    for (let i = 0; i < 10; i++) await allowed(w, create(appBackup(`ghost-${i}`)));
    const done = appBackup('done', 'Completed');
    w.kube.seed(done);
    await allowed(w, review('DELETE', null, { old: { ...done, metadata: { ...done.metadata, uid: randomUUID() } } }));
    await w.settle();
    assert.deepEqual(jobs(w.kube), []);
  });

  it("checks a schedule's AppBackup hooks as an AppBackup's", () => {
    const schedule = nightlySchedule({ appBackup: { hooks: { pre: [hook({ selector: {}, timeout: '0s' })] } } });
    const denial = checkSchedule(schedule, 'spec');
    assert.match(denial?.message ?? '', /spec\.appBackup\.hooks\.pre\[0\]\.selector: must pick pods/);
    assert.match(denial?.message ?? '', /spec\.appBackup\.hooks\.pre\[0\]\.timeout: must be longer than 0/);
  });
});

describe('AppRestore admission', () => {
  function withBackup(): World {
    const w = appWorld();
    const ab = appBackup('db', 'Completed');
    ab.status = { ...ab.status, volumes: [{ pvc: 'data' }, { pvc: 'wal' }] };
    w.kube.seed(ab);
    return w;
  }

  it('admits a restore in the namespace or one the location allows, and starts its step', async () => {
    const w = withBackup();
    await allowed(w, create(appRestore('same')));
    const cross = appRestore('cross', undefined, { appBackup: { name: 'db', namespace: 'app' } }, 'other');
    await allowed(w, create(cross));
    w.kube.seed(cross);
    await w.settle();
    assert.equal(jobs(w.kube).length, 1);
  });

  it('refuses a restore of a backup that does not exist, and one into a namespace the location does not allow', async () => {
    const w = withBackup();
    await denied(
      w,
      create(appRestore('r', undefined, { appBackup: { name: 'nope' } })),
      /spec\.appBackup: AppBackup "nope" does not exist in namespace app/,
    );
    // off limits or missing: the same words, so another namespace's backups cannot be probed
    const offLimits =
      /spec\.appBackup\.namespace: namespace intruder may not restore AppBackup "(db|ghost)" of namespace app: there is no such AppBackup, or its BackupStorageLocation does not allow restores from app into intruder/;
    await denied(
      w,
      create(appRestore('r', undefined, { appBackup: { name: 'db', namespace: 'app' } }, 'intruder')),
      offLimits,
      403,
    );
    await denied(
      w,
      create(appRestore('r', undefined, { appBackup: { name: 'ghost', namespace: 'app' } }, 'intruder')),
      offLimits,
      403,
    );
    await denied(
      w,
      create(appRestore('r', undefined, { appBackup: { name: 'db', namespace: 'App!' } })),
      /spec\.appBackup\.namespace: must be a DNS-1123 label/,
    );
  });

  it('refuses two volumes restored into one PVC, and names for volumes not restored', async () => {
    const w = withBackup();
    await denied(
      w,
      create(appRestore('r', undefined, { pvcNames: { data: 'wal' } })),
      /spec\.pvcNames: volumes data and wal would both be restored into PVC wal/,
    );
    await denied(
      w,
      create(appRestore('r', undefined, { volumes: ['data'], pvcNames: { wal: 'x' } })),
      /spec\.pvcNames\["wal"\]: wal is not in spec\.volumes/,
    );
    await denied(
      w,
      create(appRestore('r', undefined, { pvcNames: { 'Bad/Name': 'x' } })),
      /spec\.pvcNames\["Bad\/Name"\]: the key must be the name of a PVC/,
    );
    await denied(
      w,
      create(appRestore('r', undefined, { volumes: ['data', 'data'] })),
      /spec\.volumes: must not repeat an item/,
    );
    await denied(w, create({ ...appRestore('r'), spec: {} } as never), /spec\.appBackup: is required/);
  });

  it('keeps the spec as created but for cancel', async () => {
    const w = withBackup();
    const old = appRestore('r', 'InProgress');
    await denied(
      w,
      review('UPDATE', { ...old, spec: { ...old.spec, appBackup: { name: 'db', namespace: 'elsewhere' } } }, { old }),
      /spec\.appBackup: cannot change after creation/,
    );
    await allowed(w, review('UPDATE', { ...old, spec: { ...old.spec, cancel: true } }, { old }));
  });
});
