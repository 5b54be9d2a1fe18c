// A DataUpload as the CLI reads it from the cluster, with the status a test gives: "b", backing up PVC data.
import type { Resource } from '../../src/cli/kube/kinds.ts';

export function uploadWith(status: Record<string, unknown>, metadata: Record<string, string> = {}): Resource {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name: 'b', ...metadata },
    spec: { sourcePVC: 'data', backupStorageLocation: 'l' },
    status,
  } as Resource;
}
