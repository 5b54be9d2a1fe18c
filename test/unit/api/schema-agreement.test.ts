// The dispatcher's valibot schemas and the CRDs' OpenAPI schemas accept and reject the same objects.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { resourceSchema, describedKinds } from '../../../src/shared/api/crds.ts';
import { fieldsOf } from '../../../src/shared/api/fields.ts';
import { validateFields } from '../../../src/shared/api/schemas.ts';
import { arbitraryOf } from './arbitraries.ts';
import { validate } from './openapi-validator.ts';

for (const kind of describedKinds) {
  describe(`${kind}: valibot and OpenAPI agree`, () => {
    for (const part of ['spec', 'status'] as const) {
      it(`on generated ${part} objects`, () => {
        const openapi = (resourceSchema(kind) as any).properties[part];
        let valid = 0;
        let runs = 0;
        fc.assert(
          fc.property(arbitraryOf(fieldsOf[kind][part]), (value) => {
            const byOpenAPI = validate(openapi, value, part);
            const byValibot = validateFields(kind, part, value);
            runs++;
            if (byOpenAPI.length === 0) valid++;
            assert.equal(
              byValibot.length === 0,
              byOpenAPI.length === 0,
              `valibot says ${JSON.stringify(byValibot)}, OpenAPI says ${JSON.stringify(byOpenAPI)} for ${JSON.stringify(value)}`,
            );
          }),
          { numRuns: 250 },
        );
        // the generators must exercise both sides, or agreement proves nothing; measured over 5,000 samples the
        // valid share is 15% (BackupStorageLocation spec) to 84% (DataUpload spec), so 5-95% never trips by chance
        assert.ok(
          valid > runs * 0.05 && valid < runs * 0.95,
          `${valid} of ${runs} generated ${part} objects were valid`,
        );
      });
    }
  });
}

describe('the test validator', () => {
  it('rejects what the schema forbids and accepts what it allows', () => {
    const spec = (resourceSchema('DataUpload') as any).properties.spec;
    assert.deepEqual(validate(spec, { sourcePVC: 'data', backupStorageLocation: 'default' }), []);
    assert.equal(validate(spec, { sourcePVC: 'Data', backupStorageLocation: 'default' }).length, 1);
    assert.equal(validate(spec, { sourcePVC: 'data' }).length, 1);
    const source = (resourceSchema('DataDownload') as any).properties.spec.properties.source;
    assert.equal(validate(source, {}).length, 1);
    assert.equal(validate(source, { snapshotID: 'abcdef12', dataUpload: { name: 'x' } }).length, 1);
    assert.deepEqual(validate(source, { snapshotID: 'abcdef12' }), []);
  });
});
