// What a new resource refers to must be there and usable, and the location must let its namespace in: checked at
// creation against the cluster, so a mistake is refused at `kubectl apply` instead of failing a Job later.
import type { BackupStorageLocation, DataDownload, DataUpload, FerryResource } from '../shared/api/types.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import { backupAllowed, restoreAllowed } from '../shared/location/namespaces.ts';
import { forbidden, invalid } from './admission.ts';
import type { Denial } from './admission.ts';

interface Claim extends KubeObject {
  status?: { phase?: string };
}

type Found<T> = T | Denial;

/** The location `name` in ferry's namespace, or a denial naming the field (`path`) that names it. */
export async function existingLocation(
  kube: Kube,
  ferryNamespace: string,
  name: string,
  path = 'spec.backupStorageLocation',
): Promise<Found<BackupStorageLocation>> {
  const found = await kube.get<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ferryNamespace,
    name,
  });
  if (!found) return invalid(`${path}: BackupStorageLocation "${name}" does not exist in namespace ${ferryNamespace}`);
  return found;
}

function namespaceNotAllowed(name: string, loc: BackupStorageLocation, namespace: string): Denial {
  return forbidden(
    `spec.backupStorageLocation: BackupStorageLocation "${name}" does not allow namespace ${namespace} (allowedNamespaces: ${(loc.spec.allowedNamespaces ?? []).join(', ')})`,
  );
}

async function location(
  kube: Kube,
  ferryNamespace: string,
  name: string,
  namespace: string,
): Promise<Found<BackupStorageLocation>> {
  const found = await existingLocation(kube, ferryNamespace, name);
  if ('code' in found) return found;
  if (!backupAllowed(found.spec, namespace)) return namespaceNotAllowed(name, found, namespace);
  return found;
}

async function checkUpload(kube: Kube, ferryNamespace: string, du: DataUpload): Promise<Denial | undefined> {
  const namespace = du.metadata.namespace ?? '';
  const loc = await location(kube, ferryNamespace, du.spec.backupStorageLocation, namespace);
  if ('code' in loc) return loc;
  const claim = await kube.get<Claim>({ kind: 'PersistentVolumeClaim', namespace, name: du.spec.sourcePVC });
  if (!claim)
    return invalid(
      `spec.sourcePVC: PersistentVolumeClaim "${du.spec.sourcePVC}" does not exist in namespace ${namespace}`,
    );
  const phase = claim.status?.phase ?? 'Pending';
  if (phase !== 'Bound')
    return invalid(
      `spec.sourcePVC: PersistentVolumeClaim "${du.spec.sourcePVC}" is ${phase}, not Bound; back it up once it is bound`,
    );
  return undefined;
}

/** The namespace whose repository a restore reads, or a denial when the spec names two different ones. */
function sourceNamespaceOf(dd: DataDownload): string | Denial {
  const namespace = dd.metadata.namespace ?? '';
  const fromUpload = dd.spec.source.dataUpload?.namespace;
  const named = dd.spec.sourceNamespace;
  if (named && fromUpload && named !== fromUpload) {
    return invalid(
      `spec.sourceNamespace: must equal spec.source.dataUpload.namespace ("${fromUpload}") when both are set, not "${named}"`,
    );
  }
  return named ?? fromUpload ?? namespace;
}

async function checkSourceUpload(kube: Kube, dd: DataDownload, sourceNamespace: string): Promise<Denial | undefined> {
  const ref = dd.spec.source.dataUpload;
  if (!ref) return undefined;
  const du = await kube.get<DataUpload & KubeObject>({
    kind: 'DataUpload',
    namespace: sourceNamespace,
    name: ref.name,
  });
  if (!du)
    return invalid(`spec.source.dataUpload: DataUpload "${ref.name}" does not exist in namespace ${sourceNamespace}`);
  if (du.spec.backupStorageLocation !== dd.spec.backupStorageLocation) {
    return invalid(
      `spec.backupStorageLocation: must be "${du.spec.backupStorageLocation}", where DataUpload "${ref.name}" stored its data, not "${dd.spec.backupStorageLocation}"`,
    );
  }
  if (du.status?.phase !== 'Completed' || du.spec.snapshotMoveData === false) {
    const why =
      du.spec.snapshotMoveData === false
        ? 'moved no data (snapshotMoveData: false)'
        : `is ${du.status?.phase ?? 'New'}, not Completed`;
    return invalid(
      `spec.source.dataUpload: DataUpload "${sourceNamespace}/${ref.name}" ${why}; restore from a completed DataUpload`,
    );
  }
  return undefined;
}

async function checkDownload(kube: Kube, ferryNamespace: string, dd: DataDownload): Promise<Denial | undefined> {
  const namespace = dd.metadata.namespace ?? '';
  const source = sourceNamespaceOf(dd);
  if (typeof source !== 'string') return source;
  const name = dd.spec.backupStorageLocation;
  const found = await existingLocation(kube, ferryNamespace, name);
  if ('code' in found) return found;
  if (!restoreAllowed(found.spec, source, namespace)) {
    return source === namespace
      ? namespaceNotAllowed(name, found, namespace)
      : forbidden(
          `spec.sourceNamespace: BackupStorageLocation "${name}" does not allow restores from namespace ${source} into namespace ${namespace} (see its spec.crossNamespaceRestores)`,
        );
  }
  const upload = await checkSourceUpload(kube, dd, source);
  if (upload) return upload;
  const target = await kube.get<Claim>({ kind: 'PersistentVolumeClaim', namespace, name: dd.spec.targetPVC.name });
  if (target?.status?.phase === 'Bound') {
    return invalid(
      `spec.targetPVC.name: PersistentVolumeClaim "${dd.spec.targetPVC.name}" is already bound to a volume; restore into a new or unbound PVC`,
    );
  }
  return undefined;
}

/** A denial when something the new resource names is missing, unusable or off limits to its namespace. */
export function checkReferences(
  kube: Kube,
  ferryNamespace: string,
  resource: FerryResource,
): Promise<Denial | undefined> {
  return resource.kind === 'DataUpload'
    ? checkUpload(kube, ferryNamespace, resource)
    : checkDownload(kube, ferryNamespace, resource);
}
