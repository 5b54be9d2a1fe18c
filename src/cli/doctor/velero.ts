// ferry as Velero's data mover (deploy/velero), when installed: the dispatcher started with it, the webhook that
// brings it Velero's objects, Velero's CRDs, and for each of Velero's storage locations one ferry location storing
// under its plugins/ferry/ folder (elsewhere, Velero's location turns Unavailable or ferry cannot tell when a
// backup's data may go).
import type { BackupStorageLocation } from '../../shared/api/types.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { veleroAnnotation } from '../../shared/install/velero.ts';
import { ferryPrefixFor, veleroPrefixOf } from '../../shared/velero/backup-exists.ts';
import { ok, problem, warning, type Finding, type Install } from './finding.ts';

const area = 'velero';
const reinstall = 'Run `ferry install --velero` (with --velero-namespace if Velero is not in "velero").';

interface VeleroLocation extends KubeObject {
  spec: { objectStorage?: { bucket?: string; prefix?: string } };
}

/** Whether a ferry location stores where Velero's location expects a plugin's data. */
function placement(ferry: BackupStorageLocation, velero: VeleroLocation): string | undefined {
  const bucket = velero.spec.objectStorage?.bucket;
  if (ferry.spec.s3.bucket !== bucket)
    return `stores in bucket ${ferry.spec.s3.bucket}, not in Velero's bucket ${bucket ?? '(none)'}`;
  const want = ferryPrefixFor(velero.spec.objectStorage?.prefix);
  const have = veleroPrefixOf(ferry.spec.s3.prefix);
  if (have === undefined || ferryPrefixFor(have) !== want)
    return `has the prefix "${ferry.spec.s3.prefix ?? ''}", not "${want}"`;
  return undefined;
}

export async function checkVelero(kube: Kube, install: Install): Promise<Finding[]> {
  const config = await kube.get<KubeObject & { data?: Record<string, string> }>({
    kind: 'ConfigMap',
    namespace: install.namespace,
    name: 'ferry-velero',
  });
  const ns = config?.data?.FERRY_VELERO_NAMESPACE;
  if (!ns) return [ok(area, 'component', "ferry is not installed as Velero's data mover (no --velero).")];
  const findings: Finding[] = [];
  const dispatcher = await kube.get<KubeObject & { spec: { template: { metadata?: KubeObject['metadata'] } } }>({
    kind: 'Deployment',
    namespace: install.namespace,
    name: 'ferry-dispatcher',
  });
  const started = dispatcher?.spec.template.metadata?.annotations?.[veleroAnnotation];
  findings.push(
    started === ns
      ? ok(area, 'dispatcher', `The dispatcher serves Velero's objects in namespace ${ns}.`)
      : warning(
          area,
          'dispatcher',
          `The dispatcher may have started before ferry-velero named namespace ${ns}.`,
          `kubectl rollout restart deployment/ferry-dispatcher -n ${install.namespace}, or ${reinstall}`,
        ),
  );
  const webhook = await kube.get<KubeObject & { webhooks?: { clientConfig?: { caBundle?: string } }[] }>({
    kind: 'ValidatingWebhookConfiguration',
    name: 'ferry-velero',
  });
  findings.push(
    webhook?.webhooks?.every((h) => h.clientConfig?.caBundle)
      ? ok(area, 'webhook', 'The ferry-velero webhook brings Velero DataUploads and DataDownloads to the dispatcher.')
      : problem(
          area,
          'webhook',
          webhook
            ? 'The ferry-velero webhook has no caBundle: the apiserver cannot call it, and Velero objects wait for the sweep.'
            : 'The ferry-velero webhook is missing.',
          webhook
            ? "Give it the dispatcher's CA as for ferry-dispatcher (ferry doctor's webhook-ca shows it)."
            : reinstall,
        ),
  );
  for (const crd of ['datauploads.velero.io', 'datadownloads.velero.io']) {
    if (!(await kube.get({ kind: 'CustomResourceDefinition', name: crd })))
      findings.push(problem(area, crd, `Velero's CRD ${crd} is not installed.`, 'Install Velero 1.14 or later.'));
  }
  const ferryLocations = await kube.list<BackupStorageLocation & KubeObject>('BackupStorageLocation', {
    namespace: install.namespace,
  });
  for (const v of await kube.list<VeleroLocation>('VeleroBackupStorageLocation', { namespace: ns })) {
    const name = v.metadata.name;
    const serving = ferryLocations.filter((l) => l.spec.velero?.backupStorageLocation === name);
    if (serving.length === 0) {
      // a Velero location may well be used without ferry: only said, not warned about
      findings.push(
        ok(
          area,
          name,
          `No ferry location serves Velero's location ${name}, so backups there cannot use --data-mover ferry (to allow it: spec.velero.backupStorageLocation: ${name} on a ferry location in the same bucket, prefix ${ferryPrefixFor(v.spec.objectStorage?.prefix)}).`,
        ),
      );
      continue;
    }
    if (serving.length > 1) {
      findings.push(
        problem(
          area,
          name,
          `Several ferry locations serve Velero's location ${name}: ${serving.map((l) => l.metadata.name).join(', ')}.`,
          'Keep spec.velero on one of them.',
        ),
      );
      continue;
    }
    const wrong = placement(serving[0], v);
    findings.push(
      wrong
        ? problem(
            area,
            name,
            `ferry location ${serving[0].metadata.name}, serving Velero's location ${name}, ${wrong}.`,
            "Point it at Velero's bucket under <Velero's prefix>/plugins/ferry: Velero marks a location Unavailable when its prefix holds other folders, and ferry frees a backup's data only once Velero no longer stores it there.",
          )
        : ok(area, name, `Velero's location ${name} is served by ferry location ${serving[0].metadata.name}.`),
    );
  }
  return findings;
}
