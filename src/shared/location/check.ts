// Checks a stored BackupStorageLocation as its steps would use it: both Secrets present and filled, then the bucket
// reached with the credentials from its Secret. The result can be recorded in the location's status.
import type { BackupStorageLocation } from '../api/types.ts';
import type { Kube, KubeObject } from '../kube/kube.ts';
import { checkPasswordSecret, LocationError, s3Access } from './access.ts';
import { probeLocation, type ProbeResult } from './probe.ts';

export type StoredLocation = BackupStorageLocation & KubeObject;

export async function checkLocation(kube: Kube, ferryNamespace: string, bsl: StoredLocation): Promise<ProbeResult> {
  let access;
  try {
    await checkPasswordSecret(kube, ferryNamespace, bsl);
    access = await s3Access(kube, ferryNamespace, bsl);
  } catch (err) {
    if (!(err instanceof LocationError)) throw err;
    return {
      ok: false,
      failure: 'secret',
      message: err.message,
      fix: `Create or fix that Secret in namespace ${ferryNamespace} (ferry location create writes both Secrets).`,
    };
  }
  try {
    return await probeLocation({
      endpoint: bsl.spec.s3.endpoint,
      bucket: bsl.spec.s3.bucket,
      prefix: bsl.spec.s3.prefix,
      ...access.s3,
    });
  } finally {
    access.dispose();
  }
}

/** Writes the outcome into status: phase Available or Unavailable, the message, and when. */
export async function recordCheck(
  kube: Kube,
  bsl: StoredLocation,
  result: ProbeResult,
  now = new Date(),
): Promise<void> {
  const status = {
    phase: result.ok ? 'Available' : 'Unavailable',
    message: result.message,
    lastValidationTime: now.toISOString(),
  };
  await kube.patch(
    { kind: 'BackupStorageLocation', namespace: bsl.metadata.namespace, name: bsl.metadata.name },
    { status },
    { status: true },
  );
}
