// Whether a Velero backup still exists, so the data a mirror holds for it must stay: its Backup object in Velero's
// namespace (not being deleted), or its metadata in Velero's storage location, from which Velero's backup sync
// would bring the object back (a Backup deleted with kubectl rather than `velero backup delete` is gone from the
// cluster only). Velero's folders sit beside ferry's: a location serving Velero has the prefix
// <Velero's prefix>/plugins/ferry, so Velero's own is that prefix without its last two parts.
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import type { BackupStorageLocation, FerryResource } from '../api/types.ts';
import { s3Client } from '../../engine/operations/storage.ts';
import type { Kube, KubeObject } from '../kube/kube.ts';
import { s3Access } from '../location/access.ts';
import { mirrorAnnotations, mirroredObject } from './mirror.ts';
import type { VeleroBackup } from './types.ts';

const ferryFolder = 'plugins/ferry';

const trimSlashes = (p: string | undefined): string => (p ?? '').replace(/^\/+|\/+$/g, '');

/** Velero's prefix in the bucket, from the prefix of the ferry location that serves it. */
export function veleroPrefixOf(ferryPrefix: string | undefined): string | undefined {
  const prefix = trimSlashes(ferryPrefix);
  if (prefix === ferryFolder) return '';
  return prefix.endsWith(`/${ferryFolder}`) ? prefix.slice(0, -ferryFolder.length - 1) : undefined;
}

/** The prefix of a ferry location serving a Velero location of this prefix: <Velero's prefix>/plugins/ferry. */
export function ferryPrefixFor(veleroPrefix: string | undefined): string {
  return [trimSlashes(veleroPrefix), ferryFolder].filter(Boolean).join('/');
}

/** The Velero Backup a mirror holds data for, as the mirror names it, with the Backup object while it exists and is
 * not being deleted; undefined when the mirror names none. */
export async function mirroredBackup(
  kube: Kube,
  mirror: FerryResource,
): Promise<{ namespace: string; name: string; uid?: string; live?: VeleroBackup } | undefined> {
  const name = mirror.metadata.annotations?.[mirrorAnnotations.backup];
  const namespace = mirroredObject(mirror)?.namespace;
  if (!name || !namespace) return undefined;
  const backup = await kube.get<VeleroBackup & KubeObject>({ kind: 'VeleroBackup', namespace, name });
  const live = backup && !backup.metadata.deletionTimestamp && backup.status?.phase !== 'Deleting';
  return {
    namespace,
    name,
    uid: mirror.metadata.annotations?.[mirrorAnnotations.backupUID],
    live: live ? backup : undefined,
  };
}

/** Why the Velero backup a mirror holds data for still exists, or undefined when it is gone (or none is named). */
export async function veleroBackupHolds(
  kube: Kube,
  ferryNamespace: string,
  mirror: FerryResource,
  location: BackupStorageLocation,
): Promise<string | undefined> {
  const backup = await mirroredBackup(kube, mirror);
  if (!backup) return undefined;
  const { namespace, name } = backup;
  if (backup.live) return `Velero backup ${namespace}/${name} still exists`;
  const prefix = veleroPrefixOf(location.spec.s3.prefix);
  if (prefix === undefined)
    return `location ${location.metadata.name} has the prefix "${location.spec.s3.prefix ?? ''}", not <Velero's prefix>/${ferryFolder}, so ferry cannot tell whether Velero still stores backup ${name}`;
  const key = `${prefix ? `${prefix}/` : ''}backups/${name}/velero-backup.json`;
  const access = await s3Access(kube, ferryNamespace, location);
  const client = await s3Client({ endpoint: location.spec.s3.endpoint, ...access.s3 });
  try {
    await client.send(new HeadObjectCommand({ Bucket: location.spec.s3.bucket, Key: key }));
    return `Velero still stores backup ${name} (s3://${location.spec.s3.bucket}/${key}); its backup sync would bring it back`;
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
    throw err;
  } finally {
    client.destroy();
    access.dispose();
  }
}
