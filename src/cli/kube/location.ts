// The storage location a new backup or restore uses when --location is not given: the only one there is.
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { KubeError } from '../../shared/kube/errors.ts';
import { UsageError } from '../run.ts';

export async function defaultLocation(kube: Kube, ferryNamespace: string): Promise<string> {
  let names: string[];
  try {
    names = (await kube.list<KubeObject>('BackupStorageLocation', { namespace: ferryNamespace })).map(
      (l) => l.metadata.name,
    );
  } catch (err) {
    if (err instanceof KubeError && err.status === 403)
      throw new UsageError('--location is required: you may not list the storage locations to pick the only one');
    throw err;
  }
  if (names.length === 1) return names[0];
  if (names.length === 0)
    throw new UsageError(
      `--location is required, and there is no BackupStorageLocation in ${ferryNamespace} to default to`,
    );
  throw new UsageError(`--location is required when there are several storage locations: ${names.sort().join(', ')}`);
}
