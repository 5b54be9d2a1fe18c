// What a copy needs before it moves anything, and why it can never work when it cannot: the DataUpload (Completed,
// with its snapshot id) and the destination location (another one, allowing the namespace). Anything else that goes
// wrong (a location's Secret missing, S3 unreachable) is transient: the attempt fails and the next one tries again.
import { parseDuration } from '../../shared/api/duration.ts';
import type { DataUpload } from '../../shared/api/types.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { readLocation } from '../../shared/location/access.ts';
import { backupAllowed } from '../../shared/location/namespaces.ts';
import type { CopyContext, DataCopyObject } from './context.ts';

export type UploadObject = DataUpload & KubeObject;

export interface CopyPlan {
  upload: UploadObject;
  sourceSnapshotID: string;
  sourceLocation: string;
  /** spec.operationTimeout: how long one attempt may move data */
  timeoutMs?: number;
}

/** The plan, or the message of a copy that can never work (phase Failed). */
export async function resolveCopy(ctx: CopyContext, dc: DataCopyObject): Promise<CopyPlan | string> {
  const ns = dc.metadata.namespace ?? '';
  const name = dc.spec.dataUpload;
  const upload = await ctx.kube.get<UploadObject>({ kind: 'DataUpload', namespace: ns, name });
  if (!upload) return `spec.dataUpload: DataUpload ${ns}/${name} does not exist`;
  const phase = upload.status?.phase ?? 'New';
  if (phase !== 'Completed')
    return `spec.dataUpload: DataUpload ${ns}/${name} is ${phase}; only a Completed backup can be copied`;
  const sourceSnapshotID = upload.status?.snapshotID;
  if (!sourceSnapshotID) return `spec.dataUpload: DataUpload ${ns}/${name} is Completed without a snapshotID`;
  let timeoutMs: number | undefined;
  try {
    timeoutMs = parseDuration(dc.spec.operationTimeout) || undefined;
  } catch (err) {
    return `spec.operationTimeout: ${(err as Error).message}`;
  }
  const sourceLocation = upload.spec.backupStorageLocation;
  const destination = dc.spec.backupStorageLocation;
  if (destination === sourceLocation)
    return `spec.backupStorageLocation: "${destination}" is where DataUpload ${name} is stored already; a copy needs another location`;
  // a missing location may still be created: it fails this attempt only, unlike a location refusing the namespace
  const bsl = await readLocation(ctx.kube, ctx.ferryNamespace, destination);
  if (!backupAllowed(bsl.spec, ns))
    return `spec.backupStorageLocation: location "${destination}" allows namespaces [${(bsl.spec.allowedNamespaces ?? []).join(', ')}], not "${ns}"`;
  return { upload, sourceSnapshotID, sourceLocation, timeoutMs };
}
