// ferry's backups start from CSI snapshots: the snapshot CRDs must be served, and each CSI driver in use needs a
// default VolumeSnapshotClass, since the snapshot step leaves the class to the snapshot controller's default.
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { ok, problem, type Finding } from './finding.ts';

const area = 'snapshots';
const snapshotCrds = ['volumesnapshots', 'volumesnapshotcontents', 'volumesnapshotclasses'].map(
  (p) => `${p}.snapshot.storage.k8s.io`,
);
const defaultClass = 'snapshot.storage.kubernetes.io/is-default-class';

interface StorageClass extends KubeObject {
  provisioner: string;
}

interface SnapshotClass extends KubeObject {
  driver: string;
}

/** CSI drivers that volumes use or can be provisioned with, each with what uses it. */
async function driversInUse(kube: Kube): Promise<Map<string, string[]>> {
  const registered = new Set((await kube.list('CSIDriver')).map((d) => d.metadata.name));
  const users = new Map<string, string[]>();
  const add = (driver: string, user: string) => users.set(driver, [...(users.get(driver) ?? []), user]);
  for (const sc of await kube.list<StorageClass>('StorageClass'))
    if (registered.has(sc.provisioner)) add(sc.provisioner, `StorageClass ${sc.metadata.name}`);
  const pvs = await kube.list<KubeObject & { spec: { csi?: { driver: string } } }>('PersistentVolume');
  const counts = new Map<string, number>();
  for (const pv of pvs) if (pv.spec.csi) counts.set(pv.spec.csi.driver, (counts.get(pv.spec.csi.driver) ?? 0) + 1);
  for (const [driver, n] of counts) add(driver, `${n} PersistentVolume${n === 1 ? '' : 's'}`);
  return users;
}

function classManifest(driver: string): string {
  return `apiVersion: snapshot.storage.k8s.io/v1, kind: VolumeSnapshotClass, driver: ${driver}, deletionPolicy: Delete, annotation ${defaultClass}: "true"`;
}

export async function checkSnapshots(kube: Kube): Promise<Finding[]> {
  const findings: Finding[] = [];
  const missing = [];
  for (const name of snapshotCrds)
    if (!(await kube.get({ kind: 'CustomResourceDefinition', name }))) missing.push(name);
  if (missing.length > 0) {
    return [
      problem(
        area,
        'crds',
        `The snapshot CRDs ${missing.join(', ')} are not installed, so no CSI snapshot can be taken.`,
        'Install the external-snapshotter CRDs and snapshot-controller (github.com/kubernetes-csi/external-snapshotter, client/config/crd and deploy/kubernetes/snapshot-controller).',
      ),
    ];
  }
  findings.push(ok(area, 'crds', 'The snapshot.storage.k8s.io CRDs are installed.'));
  const classes = await kube.list<SnapshotClass>('VolumeSnapshotClass');
  for (const [driver, users] of await driversInUse(kube)) {
    const own = classes.filter((c) => c.driver === driver);
    const defaults = own.filter((c) => c.metadata.annotations?.[defaultClass] === 'true');
    const usedBy = users.join(', ');
    if (own.length === 0) {
      findings.push(
        problem(
          area,
          driver,
          `CSI driver ${driver} (used by ${usedBy}) has no VolumeSnapshotClass, so its volumes cannot be backed up.`,
          `Create one: ${classManifest(driver)}.`,
        ),
      );
    } else if (defaults.length !== 1) {
      findings.push(
        problem(
          area,
          driver,
          `CSI driver ${driver} has ${defaults.length === 0 ? 'no default' : `${defaults.length} default`} VolumeSnapshotClasses (${own.map((c) => c.metadata.name).join(', ')}), so a snapshot without a class name fails.`,
          `Mark exactly one of them with the annotation ${defaultClass}: "true".`,
        ),
      );
    } else {
      findings.push(
        ok(
          area,
          driver,
          `CSI driver ${driver} (used by ${usedBy}) has the default VolumeSnapshotClass ${defaults[0].metadata.name}.`,
        ),
      );
    }
  }
  return findings;
}
