import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';

// The layers of src/ and what each may import. The engine is the repository format and its operations: it must run
// where no cluster exists (the CLI against a bucket, restic's tests beside it), so nothing Kubernetes enters it.
const src = resolve(import.meta.dirname, '..', '..', '..', 'src');

interface Import { file: string; specifier: string; target?: string }

async function imports(): Promise<Import[]> {
  const found: Import[] = [];
  for (const name of await readdir(src, { recursive: true })) {
    if (!/\.(ts|mjs)$/.test(name)) continue;
    const file = join(src, name);
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+|\bnew URL\(\s*)(['"])([^'"]+)\1/gm)) {
      const specifier = m[2];
      const target = specifier.startsWith('.') ? resolve(dirname(file), specifier) : undefined;
      found.push({ file: relative(src, file), specifier, target: target && relative(src, target) });
    }
  }
  return found;
}

const layer = (path: string) => path.split('/')[0];
const packageOf = (specifier: string) => specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];

test('the engine imports only itself, Node and the storage and cipher libraries: nothing of Kubernetes', async () => {
  const allowed = new Set(['@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@smithy/node-http-handler', '@noble/ciphers', 'koffi']);
  const wrong = (await imports()).filter((i) => layer(i.file) === 'engine').filter((i) => i.target
    ? layer(i.target) !== 'engine'
    : !i.specifier.startsWith('node:') && !allowed.has(packageOf(i.specifier)));
  assert.deepEqual(wrong.map((i) => `${i.file} imports ${i.specifier}`), []);
});

test('nothing under src/ imports the tests, the benchmarks or the box', async () => {
  const wrong = (await imports()).filter((i) => i.target?.startsWith('..'));
  assert.deepEqual(wrong.map((i) => `${i.file} imports ${i.specifier}`), []);
});

test('shared/ stands on the engine alone: it never reaches up into the steps, the dispatcher, the CLI or an entry', async () => {
  const wrong = (await imports()).filter((i) => layer(i.file) === 'shared' && i.target && !['shared', 'engine'].includes(layer(i.target)));
  assert.deepEqual(wrong.map((i) => `${i.file} imports ${i.specifier}`), []);
});

test('the steps, the dispatcher and the CLI stand side by side on shared/: none imports another (the entry points may)', async () => {
  const peers = ['steps', 'dispatcher', 'cli'];
  const wrong = (await imports()).filter((i) => i.target && peers.includes(layer(i.file)) && peers.includes(layer(i.target)) && layer(i.target) !== layer(i.file));
  assert.deepEqual(wrong.map((i) => `${i.file} imports ${i.specifier}`), []);
});

test('the schedule and maintenance steps and the data steps do not reach into each other: what they share is at the top of steps/', async () => {
  const contexts = ['data', 'schedule', 'maintenance'];
  const contextOf = (path: string) => path.split('/')[0] === 'steps' ? path.split('/')[1] : undefined;
  const wrong = (await imports()).filter((i) => {
    const from = contextOf(i.file);
    const to = i.target && contextOf(i.target);
    return from && to && contexts.includes(from) && contexts.includes(to) && from !== to;
  });
  assert.deepEqual(wrong.map((i) => `${i.file} imports ${i.specifier}`), []);
});

test('the boundary check sees through every form of import it guards', async () => {
  const all = await imports();
  const specifiers = new Set(all.filter((i) => layer(i.file) === 'engine').map((i) => i.specifier));
  // a static import, a dynamic import and a worker's module URL are all among what the engine is checked for
  assert.ok(specifiers.has('node:worker_threads'));
  assert.ok(all.some((i) => i.file === 'engine/backup/pool.ts' && i.specifier === './worker.ts'));
  assert.ok(all.some((i) => layer(i.file) === 'shared' && i.specifier === '@kubernetes/client-node'));
  // the peers' rule sees the imports it allows the entry points
  assert.ok(all.some((i) => i.file === 'entry/step.ts' && i.target === 'steps/table.ts'));
});
