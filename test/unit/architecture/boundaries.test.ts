import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';

// The layers of src/ and what each may import. The engine is the repository format and its operations: it must run
// where no cluster exists (the CLI against a bucket, restic's tests beside it), so nothing Kubernetes enters it.
const src = resolve(import.meta.dirname, '..', '..', '..', 'src');

interface Import {
  file: string;
  specifier: string;
  target?: string;
}

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
const packageOf = (specifier: string) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];

test('the engine imports only itself, Node and the storage and cipher libraries: nothing of Kubernetes', async () => {
  const allowed = new Set([
    '@aws-sdk/client-s3',
    '@aws-sdk/lib-storage',
    '@smithy/node-http-handler',
    '@noble/ciphers',
    'koffi',
  ]);
  const wrong = (await imports())
    .filter((i) => layer(i.file) === 'engine')
    .filter((i) =>
      i.target
        ? layer(i.target) !== 'engine'
        : !i.specifier.startsWith('node:') && !allowed.has(packageOf(i.specifier)),
    );
  assert.deepEqual(
    wrong.map((i) => `${i.file} imports ${i.specifier}`),
    [],
  );
});

// The engine's front door is src/engine/operations/: one module per use (back up, restore, check, forget, prune,
// list snapshots, open or create, add a key, unlock), each taking the lock its work needs, plus the few modules that
// hand through what callers name (storage and its S3 client, the errors they tell apart, the identity a repository is
// created with, threads started ahead). Past it, a caller could run unlocked work or walk trees itself. Besides the
// door, only two helpers that hold nothing of a repository may be used: sleep and the undici-free node:http.
const frontDoor = 'engine/operations/';
const generalHelpers = new Set(['engine/concurrency/sleep.ts', 'engine/net/http.ts']);

test('outside the engine, code reaches it only through its front door, src/engine/operations/', async () => {
  const wrong = (await imports())
    .filter((i) => layer(i.file) !== 'engine' && i.target && layer(i.target) === 'engine')
    .filter((i) => !i.target!.startsWith(frontDoor) && !generalHelpers.has(i.target!));
  assert.deepEqual(
    wrong.map((i) => `${i.file} imports ${i.specifier}`),
    [],
  );
});

test('the restore knows nothing of the backup: worker threads and progress come from concurrency/ or the operation', async () => {
  const wrong = (await imports()).filter(
    (i) => i.file.startsWith('engine/restore/') && i.target?.startsWith('engine/backup/'),
  );
  assert.deepEqual(
    wrong.map((i) => `${i.file} imports ${i.specifier}`),
    [],
  );
});

test('the front door stands on the engine alone and nothing inside the engine calls back into it', async () => {
  const all = await imports();
  const up = all.filter(
    (i) => layer(i.file) === 'engine' && !i.file.startsWith(frontDoor) && i.target?.startsWith(frontDoor),
  );
  assert.deepEqual(
    up.map((i) => `${i.file} imports ${i.specifier}`),
    [],
  );
  // every module of the door is used from outside the engine: none is an unused entrance
  const used = new Set(
    all.filter((i) => layer(i.file) !== 'engine' && i.target?.startsWith(frontDoor)).map((i) => i.target),
  );
  const door = (await readdir(join(src, frontDoor))).map((name) => frontDoor + name);
  assert.deepEqual(
    door.filter((f) => !used.has(f)),
    [],
  );
});

test('nothing under src/ imports the tests, the benchmarks or the box', async () => {
  const wrong = (await imports()).filter((i) => i.target?.startsWith('..'));
  assert.deepEqual(
    wrong.map((i) => `${i.file} imports ${i.specifier}`),
    [],
  );
});

test('shared/ stands on the engine alone: it never reaches up into the steps, the dispatcher, the CLI or an entry', async () => {
  const wrong = (await imports()).filter(
    (i) => layer(i.file) === 'shared' && i.target && !['shared', 'engine'].includes(layer(i.target)),
  );
  assert.deepEqual(
    wrong.map((i) => `${i.file} imports ${i.specifier}`),
    [],
  );
});

test('the steps, the dispatcher and the CLI stand side by side on shared/: none imports another (the entry points may)', async () => {
  const peers = ['steps', 'dispatcher', 'cli'];
  const wrong = (await imports()).filter(
    (i) =>
      i.target && peers.includes(layer(i.file)) && peers.includes(layer(i.target)) && layer(i.target) !== layer(i.file),
  );
  assert.deepEqual(
    wrong.map((i) => `${i.file} imports ${i.specifier}`),
    [],
  );
});

test('the schedule and maintenance steps and the data steps do not reach into each other: what they share is at the top of steps/', async () => {
  const contexts = ['data', 'schedule', 'maintenance'];
  const contextOf = (path: string) => (path.split('/')[0] === 'steps' ? path.split('/')[1] : undefined);
  const wrong = (await imports()).filter((i) => {
    const from = contextOf(i.file);
    const to = i.target && contextOf(i.target);
    return from && to && contexts.includes(from) && contexts.includes(to) && from !== to;
  });
  assert.deepEqual(
    wrong.map((i) => `${i.file} imports ${i.specifier}`),
    [],
  );
});

test('the boundary check sees through every form of import it guards', async () => {
  const all = await imports();
  const specifiers = new Set(all.filter((i) => layer(i.file) === 'engine').map((i) => i.specifier));
  // a static import, a dynamic import and a worker's module URL are all among what the engine is checked for
  assert.ok(specifiers.has('node:worker_threads'));
  assert.ok(all.some((i) => i.file === 'engine/backup/pool.ts' && i.specifier === './worker-thread.ts'));
  assert.ok(all.some((i) => layer(i.file) === 'shared' && i.specifier === '@kubernetes/client-node'));
  // the peers' rule sees the imports it allows the entry points
  assert.ok(all.some((i) => i.file === 'entry/step.ts' && i.target === 'steps/table.ts'));
  // a lazy import of an operation (the CLI loads the backup's modules while the key derives) is seen too
  assert.ok(all.some((i) => i.file === 'cli/repo/backup.ts' && i.target === 'engine/operations/backup.ts'));
});

test('the step-Job contract is spelled once: its labels, annotation, environment and mount paths only in shared/step-job/', async () => {
  const spelled =
    /(['"`])(ferry\.dev\/(kind|name|namespace|uid|step|attempt|resource)|FERRY_(ATTEMPT|JOB_NAME|VOLUME_PATH|DEVICE_PATH)|\/ferry\/(volume|device))\1|\.FERRY_(ATTEMPT|JOB_NAME|VOLUME_PATH|DEVICE_PATH)\b/;
  const wrong: string[] = [];
  for (const name of await readdir(src, { recursive: true })) {
    if (!/\.(ts|mjs)$/.test(name) || name.startsWith('shared/step-job/')) continue;
    const lines = (await readFile(join(src, name), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      if (spelled.test(line)) wrong.push(`${name}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(wrong, []);
});
