// The categories a profile's time is reported under: a sample goes to the nearest frame a rule recognises.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { categorize, type CpuProfile } from '../report/profile-categories.ts';

/** A profile of one call chain per sample, `ms` milliseconds each; frames listed outermost first. */
function profile(chains: { frames: [string, string][]; ms: number }[]): CpuProfile {
  const nodes: CpuProfile['nodes'] = [{ id: 1, callFrame: { functionName: '(root)', url: '' }, children: [] }];
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  for (const { frames, ms } of chains) {
    let parent = nodes[0];
    for (const [functionName, url] of frames) {
      const node = { id: nodes.length + 1, callFrame: { functionName, url }, children: [] as number[] };
      parent.children!.push(node.id);
      nodes.push(node);
      parent = node;
    }
    samples.push(parent.id);
    timeDeltas.push(ms * 1000);
  }
  return { nodes, samples, timeDeltas, startTime: 0, endTime: 0 };
}

test('blob compression and the incompressible guess count as compression, the pack code around them as packs', () => {
  const src = 'file:///ferry/src/shared/';
  const got = categorize(
    profile([
      {
        frames: [
          ['prepareBlob', `${src}pack/prepare.ts`],
          ['compressBlob', `${src}pack/blob-zstd.ts`],
        ],
        ms: 5,
      },
      {
        frames: [
          ['blobBody', `${src}pack/prepare.ts`],
          ['looksIncompressible', `${src}pack/incompressible.ts`],
        ],
        ms: 2,
      },
      { frames: [['add', `${src}repository/pack-writer.ts`]], ms: 3 },
      {
        frames: [
          ['prepareBlob', `${src}pack/prepare.ts`],
          ['update', 'node:internal/crypto/hash'],
        ],
        ms: 4,
      },
    ]),
  );
  assert.equal(got.get('compression (zstd)'), 7);
  assert.equal(got.get('packs + index'), 3);
  assert.equal(got.get('SHA-256'), 4);
});
