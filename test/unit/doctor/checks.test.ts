// The doctor's judgements that need no cluster: does a caBundle vouch for a serving certificate (real certificates
// from openssl), and is an installed CRD the one this ferry ships.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { customResourceDefinition } from '../../../src/shared/api/crds.ts';
import { crdDifference } from '../../../src/cli/doctor/crds.ts';
import { certificates, trustProblem } from '../../../src/cli/doctor/webhook-ca.ts';
import { makeTestCertificates } from '../../support/test-ca.ts';

describe('webhook caBundle against the serving certificate', () => {
  let dir: string;
  let ca: string;
  let otherCa: string;
  let leaf: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-doctor-'));
    const one = await makeTestCertificates(join(dir), 'a.crt', 'a.key');
    ca = await readFile(one.caFile, 'utf8');
    leaf = await readFile(one.certFile, 'utf8');
    const other = await mkdtemp(join(dir, 'other-'));
    otherCa = await readFile((await makeTestCertificates(other)).caFile, 'utf8');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('accepts the CA that signed it, also inside a bundle of several', () => {
    const [cert] = certificates(leaf);
    assert.equal(trustProblem(certificates(ca), cert, '127.0.0.1'), undefined);
    assert.equal(trustProblem(certificates(otherCa + ca), cert, 'localhost'), undefined);
  });

  it('names a bundle without the signing CA, an empty one, a wrong host and an expired certificate', () => {
    const [cert] = certificates(leaf);
    assert.match(
      trustProblem(certificates(otherCa), cert, '127.0.0.1') ?? '',
      /does not hold the CA that signed the serving certificate \(issuer "CN=ferry test CA"/,
    );
    assert.equal(trustProblem([], cert, '127.0.0.1'), 'holds no certificate');
    assert.match(
      trustProblem(certificates(ca), cert, 'ferry-dispatcher.ferry-system.svc') ?? '',
      /does not name ferry-dispatcher\.ferry-system\.svc \(.*IP Address:127\.0\.0\.1/,
    );
    assert.match(trustProblem(certificates(ca), cert, '10.0.0.1') ?? '', /does not name 10\.0\.0\.1/);
    assert.match(
      trustProblem(certificates(ca), cert, '127.0.0.1', new Date(Date.now() + 10 * 86_400_000)) ?? '',
      /expired on/,
    );
  });
});

describe('installed CRD against this ferry', () => {
  type Crd = Parameters<typeof crdDifference>[0];
  const expected = customResourceDefinition('DataUpload') as unknown as Crd;
  const installed = (change: (crd: any) => void = () => {}): Crd => {
    const crd: any = structuredClone(expected);
    crd.status = { conditions: [{ type: 'Established', status: 'True' }] };
    change(crd);
    return crd;
  };

  it('finds the same CRD the same', () => {
    assert.equal(crdDifference(expected, installed()), undefined);
  });

  it('names what differs', () => {
    assert.equal(
      crdDifference(
        expected,
        installed((c) => {
          c.status.conditions[0].status = 'False';
        }),
      ),
      'is not Established',
    );
    assert.equal(
      crdDifference(
        expected,
        installed((c) => {
          c.spec.versions[0].name = 'v1alpha0';
        }),
      ),
      'does not have version v1alpha1 (it has v1alpha0)',
    );
    assert.match(
      crdDifference(
        expected,
        installed((c) => {
          c.spec.versions[0].served = false;
        }),
      ) ?? '',
      /served=false, storage=true instead of served=true/,
    );
    assert.match(
      crdDifference(
        expected,
        installed((c) => {
          delete c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.sourcePVC;
        }),
      ) ?? '',
      /schema that differs from this ferry's/,
    );
  });
});
