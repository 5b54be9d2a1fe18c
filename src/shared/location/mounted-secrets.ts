// A location's two Secrets (S3 credentials, repository password) reach a step's pod as secret volumes, read by the
// kubelet: the step's ServiceAccount reads no Secret at all, so a compromised step cannot reach any other Secret of
// ferry's namespace (the webhook's TLS key, another location's keys). Whoever builds the pod (the dispatcher for
// transfer and delete Jobs, the maintenance reconcile for a location's CronJobs) mounts the Secrets its location
// names at /ferry/secrets/<secret name>/<key>; access.ts reads them there.
import type { BackupStorageLocation, BackupStorageLocationSpec } from '../api/types.ts';
import type { Kube, KubeObject } from '../kube/kube.ts';

export const secretsRoot = '/ferry/secrets';
const volumePrefix = 'ferry-secret-';

interface PodWithSecrets {
  volumes?: Record<string, unknown>[];
}

interface ContainerWithMounts {
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

/** The Secrets a location names, once each (the credentials and the password may share one). */
export function locationSecretNames(
  spec: Pick<BackupStorageLocationSpec, 'credential' | 'repositoryPassword'>,
): string[] {
  return [...new Set([spec.credential.name, spec.repositoryPassword.name].filter((n) => n))];
}

/** The Secrets to mount for a resource's location; none when the location is gone (the step then says so). */
export async function secretsOfLocation(kube: Kube, ferryNamespace: string, location: string): Promise<string[]> {
  const bsl = await kube.get<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ferryNamespace,
    name: location,
  });
  return bsl?.spec ? locationSecretNames(bsl.spec) : [];
}

/** Where a mounted Secret's key is found in the pod. */
export function mountedSecretPath(name: string, key: string): string {
  return `${secretsRoot}/${name}/${key}`;
}

/**
 * Adds one read-only secret volume per Secret to the pod and mounts it into the container. The volumes are optional:
 * a required one whose Secret is missing keeps the pod in ContainerCreating for good, and a transfer Job stuck so
 * holds its transfer slot while every other transfer of the cluster waits. Optional, the pod starts and the step
 * fails its resource naming the missing Secret (access.ts).
 */
export function mountSecrets(pod: PodWithSecrets, container: ContainerWithMounts, names: string[]): void {
  const ours = names.map((secretName, i) => ({ name: `${volumePrefix}${i}`, secretName }));
  const others = (v: { name: string }): boolean => !v.name.startsWith(volumePrefix);
  pod.volumes = [
    ...(pod.volumes ?? []).filter((v) => others(v as { name: string })),
    ...ours.map((o) => ({ name: o.name, secret: { secretName: o.secretName, optional: true } })),
  ];
  container.volumeMounts = [
    ...(container.volumeMounts ?? []).filter(others),
    ...ours.map((o) => ({ name: o.name, mountPath: `${secretsRoot}/${o.secretName}`, readOnly: true })),
  ];
}
