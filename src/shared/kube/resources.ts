// The kinds ferry reads or writes, with where the apiserver serves them. A fixed table instead of discovery:
// steps make no discovery calls (and need no RBAC for them), and a typo in a kind fails the type check.

export interface ResourceInfo {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
  /** status is written with the object, not through a status subresource (Velero's CRDs) */
  statusInline?: boolean;
}

const table = {
  PersistentVolumeClaim: { group: '', version: 'v1', plural: 'persistentvolumeclaims', namespaced: true },
  PersistentVolume: { group: '', version: 'v1', plural: 'persistentvolumes', namespaced: false },
  Secret: { group: '', version: 'v1', plural: 'secrets', namespaced: true },
  ConfigMap: { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
  Pod: { group: '', version: 'v1', plural: 'pods', namespaced: true },
  Namespace: { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  Event: { group: 'events.k8s.io', version: 'v1', plural: 'events', namespaced: true },
  StorageClass: { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', namespaced: false },
  CSIDriver: { group: 'storage.k8s.io', version: 'v1', plural: 'csidrivers', namespaced: false },
  CustomResourceDefinition: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    namespaced: false,
  },
  ValidatingWebhookConfiguration: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingwebhookconfigurations',
    namespaced: false,
  },
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
  Job: { group: 'batch', version: 'v1', plural: 'jobs', namespaced: true },
  CronJob: { group: 'batch', version: 'v1', plural: 'cronjobs', namespaced: true },
  VolumeSnapshot: { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshots', namespaced: true },
  VolumeSnapshotContent: {
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    plural: 'volumesnapshotcontents',
    namespaced: false,
  },
  VolumeSnapshotClass: {
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    plural: 'volumesnapshotclasses',
    namespaced: false,
  },
  // a CSI driver's changed-block tracking endpoint (KEP-3314), named after the driver
  SnapshotMetadataService: {
    group: 'cbt.storage.k8s.io',
    version: 'v1alpha1',
    plural: 'snapshotmetadataservices',
    namespaced: false,
  },
  DataUpload: { group: 'ferry.dev', version: 'v1alpha1', plural: 'datauploads', namespaced: true },
  DataDownload: { group: 'ferry.dev', version: 'v1alpha1', plural: 'datadownloads', namespaced: true },
  BackupStorageLocation: {
    group: 'ferry.dev',
    version: 'v1alpha1',
    plural: 'backupstoragelocations',
    namespaced: true,
  },
  BackupSchedule: { group: 'ferry.dev', version: 'v1alpha1', plural: 'backupschedules', namespaced: true },
  AppBackup: { group: 'ferry.dev', version: 'v1alpha1', plural: 'appbackups', namespaced: true },
  AppRestore: { group: 'ferry.dev', version: 'v1alpha1', plural: 'apprestores', namespaced: true },
  DataCopy: { group: 'ferry.dev', version: 'v1alpha1', plural: 'datacopies', namespaced: true },
  CopyPolicy: { group: 'ferry.dev', version: 'v1alpha1', plural: 'copypolicies', namespaced: true },
  VolumeGroupSnapshot: {
    group: 'groupsnapshot.storage.k8s.io',
    version: 'v1',
    plural: 'volumegroupsnapshots',
    namespaced: true,
  },
  VolumeGroupSnapshotClass: {
    group: 'groupsnapshot.storage.k8s.io',
    version: 'v1',
    plural: 'volumegroupsnapshotclasses',
    namespaced: false,
  },
  ServiceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true },
  // Velero's kinds, read and written when ferry is Velero's data mover (src/dispatcher/velero.ts)
  VeleroDataUpload: {
    group: 'velero.io',
    version: 'v2alpha1',
    plural: 'datauploads',
    namespaced: true,
    statusInline: true,
  },
  VeleroDataDownload: {
    group: 'velero.io',
    version: 'v2alpha1',
    plural: 'datadownloads',
    namespaced: true,
    statusInline: true,
  },
  VeleroBackup: { group: 'velero.io', version: 'v1', plural: 'backups', namespaced: true },
  VeleroBackupStorageLocation: {
    group: 'velero.io',
    version: 'v1',
    plural: 'backupstoragelocations',
    namespaced: true,
  },
  RoleBinding: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', namespaced: true },
} as const satisfies Record<string, ResourceInfo>;

export type KindName = keyof typeof table;

export function resourceInfo(kind: KindName): ResourceInfo {
  const info: ResourceInfo | undefined = table[kind];
  if (!info) throw new Error(`ferry does not know the Kubernetes kind "${kind}"`);
  return info;
}

export function apiVersionOf(kind: KindName): string {
  const { group, version } = resourceInfo(kind);
  return group ? `${group}/${version}` : version;
}

/** The REST path of a collection (no name) or of one object, optionally of its status subresource. */
export function resourcePath(
  kind: KindName,
  namespace: string | undefined,
  name?: string,
  subresource?: 'status',
): string {
  const info = resourceInfo(kind);
  const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
  if (info.namespaced && name !== undefined && !namespace) throw new Error(`${kind} "${name}" needs a namespace`);
  const ns = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const one = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  return `${base}${ns}/${info.plural}${one}${subresource && name !== undefined ? `/${subresource}` : ''}`;
}
