// Transfer slots: cluster and per-node limits, oldest first, nodes chosen for transfers whose node is not known.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { placeTransfers } from '../../../src/dispatcher/limits.ts';
import type { Placement, TransferCandidate } from '../../../src/dispatcher/limits.ts';

const at = (minute: number): string => `2025-01-01T00:${String(minute).padStart(2, '0')}:00Z`;
const cand = (uid: string, minute: number, node?: string): TransferCandidate => ({ uid, created: at(minute), node });
const going = (m: Map<string, Placement>): string[] =>
  [...m]
    .filter(([, p]) => p.go)
    .map(([uid]) => uid)
    .sort();

describe('placeTransfers', () => {
  it('starts everything without limits', () => {
    assert.deepEqual(going(placeTransfers([], [cand('a', 1), cand('b', 2)], { cluster: 0, perNode: 0 }, [])), [
      'a',
      'b',
    ]);
  });

  it('fills the cluster limit oldest first and says why the others wait', () => {
    const m = placeTransfers(
      [{ uid: 'running' }],
      [cand('new', 9), cand('old', 1), cand('mid', 5)],
      { cluster: 3, perNode: 0 },
      [],
    );
    assert.deepEqual(going(m), ['mid', 'old']);
    assert.deepEqual(m.get('new'), { go: false, reason: '3 of 3 transfers allowed in the cluster are running' });
  });

  it('keeps the slot of a transfer being retried', () => {
    const m = placeTransfers([{ uid: 'a', node: 'n1' }], [cand('a', 1, 'n1')], { cluster: 1, perNode: 1 }, ['n1']);
    assert.deepEqual(m.get('a'), { go: true });
  });

  it('respects the per-node limit for transfers tied to a node', () => {
    const m = placeTransfers(
      [{ uid: 'h', node: 'n1' }],
      [cand('a', 1, 'n1'), cand('b', 2, 'n2')],
      { cluster: 0, perNode: 1 },
      ['n1', 'n2'],
    );
    assert.deepEqual(m.get('a'), { go: false, reason: '1 of 1 transfers allowed on node n1 are running' });
    assert.deepEqual(m.get('b'), { go: true });
  });

  it('pins transfers whose node is unknown to the least busy node', () => {
    const m = placeTransfers(
      [{ uid: 'h', node: 'n1' }],
      [cand('a', 1), cand('b', 2), cand('c', 3), cand('d', 4)],
      { cluster: 0, perNode: 2 },
      ['n2', 'n1'],
    );
    assert.deepEqual(m.get('a'), { go: true, node: 'n2' });
    assert.deepEqual(m.get('b'), { go: true, node: 'n1' });
    assert.deepEqual(m.get('c'), { go: true, node: 'n2' });
    assert.deepEqual(m.get('d'), { go: false, reason: 'every node runs 2 transfers, the limit per node' });
  });

  it('does not pin a transfer whose volume only the scheduler can place, and counts it under the cluster limit', () => {
    const m = placeTransfers([], [{ ...cand('zonal', 1), pinnable: false }, cand('b', 2)], { cluster: 2, perNode: 1 }, [
      'n1',
    ]);
    assert.deepEqual(m.get('zonal'), { go: true });
    assert.deepEqual(m.get('b'), { go: true, node: 'n1' });
  });

  it('never exceeds either limit, whatever runs already', () => {
    const nodes = ['n1', 'n2', 'n3'];
    fc.assert(
      fc.property(
        fc.array(fc.record({ uid: fc.uuid(), node: fc.option(fc.constantFrom(...nodes), { nil: undefined }) }), {
          maxLength: 6,
        }),
        fc.array(
          fc.record({
            uid: fc.uuid(),
            created: fc.integer({ min: 0, max: 59 }).map(at),
            node: fc.option(fc.constantFrom(...nodes), { nil: undefined }),
          }),
          { maxLength: 12 },
        ),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 3 }),
        (holders, candidates, cluster, perNode) => {
          const m = placeTransfers(holders, candidates, { cluster, perNode }, nodes);
          const holding = new Set(holders.map((h) => h.uid));
          const started = candidates.filter((c) => m.get(c.uid)?.go && !holding.has(c.uid));
          if (cluster > 0)
            assert.ok(holding.size >= cluster ? started.length === 0 : holding.size + started.length <= cluster);
          if (perNode > 0) {
            for (const node of nodes) {
              const before = holders.filter((h) => h.node === node).length;
              const added = started.filter((c) => (c.node ?? (m.get(c.uid) as { node?: string }).node) === node).length;
              assert.ok(added === 0 || before + added <= perNode, `${node}: ${before} + ${added} > ${perNode}`);
            }
          }
          // oldest first: nobody waits behind a younger candidate that went, for the cluster limit
          if (cluster > 0 && perNode === 0) {
            for (const c of candidates.filter((x) => !m.get(x.uid)?.go)) {
              assert.ok(
                started.every((s) => s.created <= c.created),
                'a younger transfer started before an older one',
              );
            }
          }
        },
      ),
    );
  });
});
