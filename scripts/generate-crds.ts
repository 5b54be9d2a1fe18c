// Writes deploy/crds/*.yaml from the API description (src/shared/api/fields.ts). Run after changing the API:
//   ./node_modules/.bin/node scripts/generate-crds.ts
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crdFiles } from '../src/shared/api/crds.ts';

const dir = join(import.meta.dirname, '..', 'deploy', 'crds');
for (const [name, text] of crdFiles()) {
  await writeFile(join(dir, name), text);
  console.log(`wrote deploy/crds/${name}`);
}
