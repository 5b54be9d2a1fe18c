import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

test("the S3 backend's modules load without undici (node:http taken as a plain module, not through ESM)", async () => {
  const modules = ['../../../src/engine/backend/s3.ts', '../../../src/engine/backend/s3-signed.ts'].map(
    (m) => new URL(m, import.meta.url).href,
  );
  const script = `${modules.map((m) => `await import(${JSON.stringify(m)});`).join('\n')}
process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  assert.deepEqual(JSON.parse(stdout), []);
});
