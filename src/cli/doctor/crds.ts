// ferry's CRDs: present, Established, serving and storing this ferry's version, with this ferry's schema.
import { isDeepStrictEqual } from 'node:util';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { ok, problem, type Finding, type Install } from './finding.ts';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema?: { openAPIV3Schema?: unknown };
}

interface Crd extends KubeObject {
  spec: { versions: CrdVersion[] };
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

const area = 'crds';
const fix = 'Run `ferry install` (it applies the CRDs of this ferry).';

/** Why the installed CRD is not the expected one, or undefined when it is. */
export function crdDifference(expected: Crd, installed: Crd): string | undefined {
  const established = installed.status?.conditions?.find((c) => c.type === 'Established');
  if (established?.status !== 'True')
    return `is not Established${established?.message ? ` (${established.message})` : ''}`;
  for (const want of expected.spec.versions) {
    const have = installed.spec.versions.find((v) => v.name === want.name);
    if (!have)
      return `does not have version ${want.name} (it has ${installed.spec.versions.map((v) => v.name).join(', ')})`;
    if (have.served !== want.served || have.storage !== want.storage)
      return `has version ${want.name} with served=${have.served}, storage=${have.storage} instead of served=${want.served}, storage=${want.storage}`;
    if (!isDeepStrictEqual(have.schema?.openAPIV3Schema, want.schema?.openAPIV3Schema))
      return `has a ${want.name} schema that differs from this ferry's (another ferry version installed it)`;
  }
  return undefined;
}

export async function checkCrds(kube: Kube, install: Install): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const expected of install.crds as unknown as Crd[]) {
    const name = expected.metadata.name;
    const installed = await kube.get<Crd>({ kind: 'CustomResourceDefinition', name });
    if (!installed) {
      findings.push(problem(area, name, `CustomResourceDefinition ${name} is not installed.`, fix));
      continue;
    }
    const difference = crdDifference(expected, installed);
    if (difference) findings.push(problem(area, name, `CustomResourceDefinition ${name} ${difference}.`, fix));
    else
      findings.push(
        ok(
          area,
          name,
          `CustomResourceDefinition ${name} is installed at ${expected.spec.versions.map((v) => v.name).join(', ')} with this ferry's schema.`,
        ),
      );
  }
  return findings;
}
