// The committed CRDs are the generated ones, are structural, document every field, and describe the same API as
// src/shared/api/types.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import yaml from 'js-yaml';
import {
  crdFileName,
  crdFiles,
  customResourceDefinition,
  describedKinds,
  resourceSchema,
} from '../../../src/shared/api/crds.ts';
import type { DescribedKind } from '../../../src/shared/api/fields.ts';
import { validateFields } from '../../../src/shared/api/schemas.ts';
import { fullAppBackup, fullAppRestore, fullDownload, fullLocation, fullSchedule, fullUpload } from './fixtures.ts';
import { fullCopyPolicy, fullDataCopy } from './copy-fixtures.ts';

const crdDir = join(import.meta.dirname, '..', '..', '..', 'deploy', 'crds');

type Schema = Record<string, any>;

/** Every schema node with its path, oneOf branches excepted (they hold value checks only). */
function* nodes(schema: Schema, path: string): Generator<[string, Schema]> {
  yield [path, schema];
  for (const [name, child] of Object.entries<Schema>(schema.properties ?? {})) yield* nodes(child, `${path}.${name}`);
  if (schema.items) yield* nodes(schema.items, `${path}[]`);
  if (schema.additionalProperties) yield* nodes(schema.additionalProperties, `${path}{}`);
}

/** Paths of every leaf value of a plain object, in the same notation as nodes(). */
function* valuePaths(value: unknown, path: string): Generator<string> {
  yield path;
  if (Array.isArray(value)) for (const item of value) yield* valuePaths(item, `${path}[]`);
  else if (typeof value === 'object' && value !== null) {
    for (const [name, child] of Object.entries(value)) yield* valuePaths(child, `${path}.${name}`);
  }
}

const fixtures: Record<DescribedKind, { spec: unknown; status?: unknown }> = {
  BackupStorageLocation: fullLocation,
  DataUpload: fullUpload,
  DataDownload: fullDownload,
  BackupSchedule: fullSchedule,
  AppBackup: fullAppBackup,
  AppRestore: fullAppRestore,
  DataCopy: fullDataCopy,
  CopyPolicy: fullCopyPolicy,
};

describe('deploy/crds', () => {
  it('holds exactly the generated YAML (run scripts/generate-crds.ts after changing src/shared/api/fields.ts)', async () => {
    const expected = crdFiles();
    const present = (await readdir(crdDir)).filter((f) => f.endsWith('.yaml')).sort();
    assert.deepEqual(present, [...expected.keys()].sort());
    for (const [name, text] of expected) {
      assert.equal(await readFile(join(crdDir, name), 'utf8'), text, `deploy/crds/${name} is stale`);
    }
  });

  it('reads back as the objects it was written from', async () => {
    for (const kind of describedKinds) {
      const text = await readFile(join(crdDir, crdFileName(kind)), 'utf8');
      assert.deepEqual(yaml.load(text), customResourceDefinition(kind));
    }
  });
});

for (const kind of describedKinds) {
  describe(`the ${kind} schema`, () => {
    const schema = resourceSchema(kind);

    it('describes every field and gives every node a type (structural)', () => {
      for (const [path, node] of nodes(schema, kind)) {
        if (path === `${kind}.metadata`) continue;
        assert.ok(typeof node.description === 'string' && node.description.length > 10, `${path} has no description`);
        assert.ok(node.type, `${path} has no type`);
        for (const branch of node.oneOf ?? [])
          assert.deepEqual(Object.keys(branch), ['required'], `${path}: oneOf branches may only name required fields`);
      }
    });

    it('has printer columns that point at fields of the schema', () => {
      const known = new Set([...nodes(schema, '')].map(([path]) => path));
      const crd = customResourceDefinition(kind) as any;
      for (const column of crd.spec.versions[0].additionalPrinterColumns) {
        assert.ok(
          known.has(column.jsonPath) || column.jsonPath === '.metadata.creationTimestamp',
          `${column.name}: ${column.jsonPath} is not in the schema`,
        );
      }
    });

    it('accepts a resource with every field of types.ts set, and describes no field types.ts lacks', () => {
      const fixture = fixtures[kind];
      assert.deepEqual(validateFields(kind, 'spec', fixture.spec), []);
      assert.deepEqual(validateFields(kind, 'status', fixture.status), []);
      const present = new Set([...valuePaths(fixture.spec, '.spec'), ...valuePaths(fixture.status, '.status')]);
      // the alternative fullDownload does not take (exactly one of the two may be set); map values take any key
      const exempt = (path: string): boolean => path === '.spec.source.snapshotID' || path.includes('{}');
      for (const [path] of nodes(schema, '')) {
        if (!/^\.(spec|status)/.test(path) || exempt(path)) continue;
        assert.ok(present.has(path), `${kind}: ${path} is described but the typed fixture does not set it`);
      }
    });
  });
}

describe('the application and copy kinds under kubectl', () => {
  // every name and short name of Velero's kinds (velero.io v1 and v2alpha1) and of kubectl's built-in kinds that
  // come close: an AppBackup must never answer for `kubectl get backup` or `kubectl get bsl`
  const taken = [
    'backup',
    'backups',
    'restore',
    'restores',
    'schedule',
    'schedules',
    'bsl',
    'vsl',
    'backupstoragelocation',
    'volumesnapshotlocation',
    'podvolumebackup',
    'podvolumerestore',
    'backuprepository',
    'dataupload',
    'datadownload',
    'du',
    'dd',
    'bs',
    'apiservice',
    'ae',
  ];
  const namesOf = (kind: DescribedKind): string[] => {
    const names = (customResourceDefinition(kind) as any).spec.names;
    return [names.plural, names.singular, ...names.shortNames];
  };

  for (const [kind, short, columns] of [
    ['AppBackup', 'ab', ['Phase', 'Volumes', 'Bytes', 'Consistency', 'Location', 'Age']],
    ['AppRestore', 'ar', ['Phase', 'Volumes', 'Backup', 'Age']],
    ['DataCopy', 'dcopy', ['Phase', 'DataUpload', 'Location', 'Age']],
    ['CopyPolicy', 'cpol', ['Source', 'Destination', 'Copies', 'Last Copy', 'Age']],
  ] as const) {
    it(`${kind}: short name ${short}, no name Velero or ferry's other kinds use, and its columns`, () => {
      const crd = customResourceDefinition(kind) as any;
      const names = crd.spec.names;
      assert.deepEqual(names.shortNames, [short]);
      const others = describedKinds.filter((k) => k !== kind).flatMap(namesOf);
      for (const name of namesOf(kind)) assert.ok(![...taken, ...others].includes(name), `${name} is taken`);
      const shown = crd.spec.versions[0].additionalPrinterColumns
        .filter((c: any) => !c.priority)
        .map((c: any) => c.name);
      assert.deepEqual(shown, columns);
      assert.deepEqual(crd.spec.versions[0].subresources, { status: {} });
    });
  }
});
