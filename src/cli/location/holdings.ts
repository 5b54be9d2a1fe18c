// What a storage location holds, read from its bucket rather than from what this cluster remembers (the cluster may
// be a second site that never saw the backups): the namespaces are the folders under the location's prefix, and
// each namespace's repository, opened with the location's own derived password, lists its snapshots; ferry's tags
// say which DataUpload and PVC each one is. Read without a lock, so read-only credentials are enough.
import type { BackupStorageLocation } from '../../shared/api/types.ts';
import type { Kube } from '../../shared/kube/kube.ts';
import { repositoryAccess, readLocation } from '../../shared/location/access.ts';
import { bucketNamespaces } from '../../shared/location/bucket-namespaces.ts';
import { openBackend } from '../../engine/operations/storage.ts';
import { openRepository } from '../../engine/operations/open.ts';
import { snapshotsWithoutLock } from '../../engine/operations/snapshots.ts';
import { NoRepositoryError } from '../../engine/operations/errors.ts';
import type { SnapshotEntry } from '../../engine/operations/snapshots.ts';

export interface HeldBackup {
  namespace: string;
  /** the full snapshot id */
  snapshotID: string;
  /** RFC 3339, UTC */
  time: string;
  /** the tag ferry.dev/dataupload, if the snapshot has it (a snapshot written by restic has not) */
  dataUpload?: string;
  /** the tag ferry.dev/pvc */
  pvc?: string;
  /** bytes the backup read (the volume's data), when the snapshot records it */
  size?: number;
}

export interface Holdings {
  location: string;
  backups: HeldBackup[];
  /** namespaces whose repository could not be read, with why */
  problems: { namespace: string; message: string }[];
}

function tag(entry: SnapshotEntry, key: string): string | undefined {
  const found = entry.snapshot.tags.find((t) => t.startsWith(`${key}=`));
  return found?.slice(key.length + 1);
}

function held(namespace: string, entry: SnapshotEntry): HeldBackup {
  const ms = Number(entry.snapshot.time.ns / 1_000_000n);
  return {
    namespace,
    snapshotID: entry.id,
    time: new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z'),
    dataUpload: tag(entry, 'ferry.dev/dataupload'),
    pvc: tag(entry, 'ferry.dev/pvc'),
    size: entry.snapshot.summary?.totalBytesProcessed,
  };
}

/** The snapshots of one namespace's repository; none when the folder holds no repository. */
async function namespaceBackups(
  kube: Kube,
  ferryNamespace: string,
  bsl: BackupStorageLocation,
  namespace: string,
): Promise<HeldBackup[]> {
  const access = await repositoryAccess(kube, ferryNamespace, bsl.metadata.name, namespace);
  try {
    const s3 = { ...access.open.s3, ...(bsl.spec.recoverVersions ? { recoverVersions: true } : {}) };
    const repo = await openRepository(openBackend(access.location, { ...access.open, s3 }), access.password);
    try {
      return (await snapshotsWithoutLock(repo)).map((e) => held(namespace, e));
    } finally {
      await repo.close();
    }
  } catch (err) {
    if (err instanceof NoRepositoryError) return [];
    throw err;
  } finally {
    access.dispose();
  }
}

/**
 * The backups `location` holds, oldest first per namespace: in `namespace` only, or in every namespace whose folder
 * the bucket has. A repository that cannot be read (not ferry's, another password) is a problem, not the end.
 */
export async function locationHoldings(
  kube: Kube,
  ferryNamespace: string,
  location: string,
  namespace?: string,
): Promise<Holdings> {
  const bsl = await readLocation(kube, ferryNamespace, location);
  const namespaces = namespace ? [namespace] : await bucketNamespaces(kube, ferryNamespace, bsl);
  const holdings: Holdings = { location, backups: [], problems: [] };
  for (const ns of namespaces) {
    try {
      const backups = await namespaceBackups(kube, ferryNamespace, bsl, ns);
      holdings.backups.push(...backups.sort((a, b) => a.time.localeCompare(b.time)));
    } catch (err) {
      holdings.problems.push({ namespace: ns, message: err instanceof Error ? err.message : String(err) });
    }
  }
  return holdings;
}
