// Each storage location (or the ones named) reachable with the credentials in its Secret, as its steps would use it.
import type { Kube } from '../../shared/kube/kube.ts';
import { checkLocation, type StoredLocation } from '../../shared/location/check.ts';
import { ok, problem, warning, type Finding, type Install } from './finding.ts';

const area = 'locations';

export async function checkLocations(kube: Kube, install: Install, only: readonly string[]): Promise<Finding[]> {
  const all = await kube.list<StoredLocation>('BackupStorageLocation', { namespace: install.namespace });
  const chosen = only.length > 0 ? all.filter((l) => only.includes(l.metadata.name)) : all;
  const findings: Finding[] = only
    .filter((n) => !all.some((l) => l.metadata.name === n))
    .map((n) =>
      problem(
        area,
        n,
        `BackupStorageLocation ${n} does not exist in ${install.namespace}.`,
        'Create it with `ferry location create`.',
      ),
    );
  if (all.length === 0)
    findings.push(
      warning(
        area,
        'none',
        `There is no BackupStorageLocation in ${install.namespace}, so nothing can be backed up.`,
        'Create one with `ferry location create NAME --endpoint ... --bucket ...`.',
      ),
    );
  for (const location of chosen) {
    const result = await checkLocation(kube, install.namespace, location);
    const name = location.metadata.name;
    findings.push(
      result.ok
        ? ok(area, name, `BackupStorageLocation ${name}: ${result.message}`)
        : problem(area, name, `BackupStorageLocation ${name}: ${result.message}`, result.fix),
    );
  }
  return findings;
}
