// What the dispatcher reads back for a review: the stored object only when its uid is the review's, then the version
// the apiserver stores after the answer (or that it is gone); nothing for a change that is never stored, one
// follow-up per change, and a bound on how many are waited for.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StoredChanges } from '../../../src/dispatcher/stored.ts';
import type { StoredChange } from '../../../src/dispatcher/stored.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { review, upload } from './world.ts';

const key = { kind: 'DataUpload' as const, namespace: 'app', name: 'x' };

function setup(maxPending = 8): {
  kube: MemoryKube;
  changes: StoredChanges;
  seen: StoredChange[];
  act: (c: StoredChange) => Promise<void>;
} {
  const kube = new MemoryKube();
  const seen: StoredChange[] = [];
  return {
    kube,
    changes: new StoredChanges(kube, { timeoutMs: 200, firstReadMs: 1, maxPending }),
    seen,
    act: async (c) => void seen.push(c),
  };
}

const fail = (err: unknown): never => assert.fail(String(err));

/** A DataUpload as the apiserver would store it: the memory cluster gives it a resourceVersion of its own. */
function stored(phase: 'Accepted'): ReturnType<typeof upload> {
  const r = upload('x', phase);
  delete r.metadata.resourceVersion;
  return r;
}

describe('StoredChanges', () => {
  it("watches only a stored object with the review's uid, or for a creation a name nothing holds", async () => {
    const { kube, changes } = setup();
    const r = upload('x', 'Accepted');
    assert.equal(
      await changes.watch(review('UPDATE', r, { old: r }).request!, 'DataUpload'),
      undefined,
      'nothing stored',
    );
    kube.seed(r);
    assert.equal(
      (await changes.watch(review('UPDATE', r, { old: r }).request!, 'DataUpload'))?.before?.metadata.uid,
      r.metadata.uid,
    );
    const other = { ...r, metadata: { ...r.metadata, uid: 'another' } };
    assert.equal(
      await changes.watch(review('UPDATE', other, { old: other }).request!, 'DataUpload'),
      undefined,
      'another uid',
    );
    assert.equal(
      await changes.watch(review('DELETE', null, { old: other }).request!, 'DataUpload'),
      undefined,
      'another uid, deleted',
    );
    assert.equal(
      await changes.watch(review('CREATE', r).request!, 'DataUpload'),
      undefined,
      'a creation of a name already stored',
    );
    const noUid = { ...r, metadata: { ...r.metadata, uid: undefined } };
    assert.equal(
      await changes.watch(review('UPDATE', noUid, { old: noUid }).request!, 'DataUpload'),
      undefined,
      'no uid',
    );
  });

  it('hands on the stored versions once the change is stored, or that the object is gone', async () => {
    const { kube, changes, seen, act } = setup();
    const r = stored('Accepted');
    kube.seed(r);
    const watched = (await changes.watch(
      review('UPDATE', r, { old: r, subResource: 'status' }).request!,
      'DataUpload',
    ))!;
    assert.equal(changes.follow(watched, act, fail), true);
    kube.mutate(key, (o) => {
      o.status = { phase: 'Prepared' };
    });
    await changes.idle();
    assert.deepEqual(
      seen.map((c) => [
        (c.before?.status as { phase?: string })?.phase,
        (c.after?.status as { phase?: string })?.phase,
      ]),
      [['Accepted', 'Prepared']],
    );
    const again = (await changes.watch(review('DELETE', null, { old: r }).request!, 'DataUpload'))!;
    changes.follow(again, act, fail);
    await kube.delete(key);
    await changes.idle();
    assert.equal(seen.length, 2);
    assert.equal(seen[1].after, undefined);
  });

  it('hands on nothing when the change is never stored, and follows one change once', async () => {
    const { kube, changes, seen, act } = setup();
    const r = stored('Accepted');
    kube.seed(r);
    const watched = (await changes.watch(review('UPDATE', r, { old: r }).request!, 'DataUpload'))!;
    changes.follow(watched, act, fail);
    changes.follow(watched, act, fail);
    await changes.idle();
    assert.deepEqual(seen, []);
    changes.follow(watched, act, fail);
    changes.follow(watched, act, fail);
    kube.mutate(key, () => undefined);
    await changes.idle();
    assert.equal(seen.length, 1);
  });

  it('waits for a bounded number of changes at once', async () => {
    const { changes, act } = setup(3);
    const followed = Array.from({ length: 5 }, (_, i) =>
      changes.follow({ key: { ...key, name: `x${i}` }, uid: `uid-${i}` }, act, fail),
    );
    assert.deepEqual(followed, [true, true, true, false, false]);
    await changes.idle();
    assert.equal(changes.follow({ key, uid: 'later' }, act, fail), true, 'room again once they are given up');
    await changes.idle();
  });
});
