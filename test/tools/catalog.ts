// The real peers ferry is tested against. Each has a tiny wrapper Go module next to this file
// (test/tools/<name>/go.mod + go.sum) whose `tool` line pins the peer and, through go.sum, every dependency.
// Bumping a peer is `go get -tool <module>@<version>` in its folder; the cache folder name follows the new version.
// Wrapper modules instead of `go install module@version`: the Go proxy reachable here refuses the version list
// that `go install` fetches to check for deprecation, and the wrappers pin the dependency graph as well.

export type ToolName =
  | 'restic'
  | 'minio'
  | 'kopia'
  | 'csi-provisioner'
  | 'csi-snapshot-metadata'
  | 'snapshot-metadata-lister'
  | 'velero'
  | 'velero-plugin-for-aws';

export interface ToolSpec {
  name: ToolName;
  /** Go module of the peer; its version is read from the wrapper's go.mod */
  module: string;
  /** import path of the peer's `main` package */
  pkg: string;
  /** the tool whose wrapper module (test/tools/<name>/) builds this one; default: its own */
  wrapper?: ToolName;
  binary: string;
  /** arguments that make the binary print its version */
  versionArgs: string[];
  /** only the benchmarks (bench/) use it, so `npm run tools` skips it unless named */
  benchOnly?: boolean;
  /** the cluster in a box builds it (test/cluster/build.ts), so `npm run tools` skips it unless named */
  boxOnly?: boolean;
  /** -X flags that stamp the version into the binary, as the peer's own release build does */
  ldflags?: (version: string) => string[];
}

export const tools: Record<ToolName, ToolSpec> = {
  restic: {
    name: 'restic',
    module: 'github.com/restic/restic',
    pkg: 'github.com/restic/restic/cmd/restic',
    binary: 'restic',
    versionArgs: ['version'],
  },
  minio: {
    name: 'minio',
    // MinIO publishes no semver tags to the proxy, so its wrapper pins a pseudo-version (a commit)
    module: 'github.com/minio/minio',
    pkg: 'github.com/minio/minio',
    binary: 'minio',
    versionArgs: ['--version'],
  },
  kopia: {
    name: 'kopia',
    // a benchmark peer (bench/), not a test oracle: Velero's data mover is built on it
    module: 'github.com/kopia/kopia',
    pkg: 'github.com/kopia/kopia',
    binary: 'kopia',
    versionArgs: ['--version'],
    benchOnly: true,
  },
  'csi-provisioner': {
    name: 'csi-provisioner',
    // The box's CSI sidecar. Its own module, not test/cluster's: v5.3.0 does not compile against the box's
    // client-go 1.37, so it is built with the dependency versions of its release (the wrapper copies its replaces).
    module: 'github.com/kubernetes-csi/external-provisioner/v5',
    pkg: 'github.com/kubernetes-csi/external-provisioner/v5/cmd/csi-provisioner',
    binary: 'csi-provisioner',
    versionArgs: ['--version'],
    boxOnly: true,
  },
  'csi-snapshot-metadata': {
    name: 'csi-snapshot-metadata',
    // The box's SnapshotMetadata sidecar, in its own module for the same reason: v0.2.0 needs CSI spec 1.12 and
    // csi-test 5.4 (golang/mock), the box's csi-snapshotter spec 1.13 and csi-test 5.6 (uber mock).
    module: 'github.com/kubernetes-csi/external-snapshot-metadata',
    pkg: 'github.com/kubernetes-csi/external-snapshot-metadata/cmd/csi-snapshot-metadata',
    binary: 'csi-snapshot-metadata',
    versionArgs: ['--version'],
    boxOnly: true,
  },
  'snapshot-metadata-lister': {
    name: 'snapshot-metadata-lister',
    // The SnapshotMetadata API's own example client, from the sidecar's module: the box's test reads allocated and
    // changed blocks through the sidecar with it, as a backup application does (a ServiceAccount token, TLS).
    module: 'github.com/kubernetes-csi/external-snapshot-metadata',
    pkg: 'github.com/kubernetes-csi/external-snapshot-metadata/examples/snapshot-metadata-lister',
    wrapper: 'csi-snapshot-metadata',
    binary: 'snapshot-metadata-lister',
    versionArgs: ['-h'],
    boxOnly: true,
  },
  velero: {
    name: 'velero',
    // Velero's server and CLI (one binary), run in the box as in a cluster so ferry is tested as its data mover.
    // The wrapper repeats Velero's kopia replace and pins Kubernetes 0.33.7 modules: the proxy here serves none
    // of the 0.33.12 ones Velero names.
    module: 'github.com/vmware-tanzu/velero',
    pkg: 'github.com/vmware-tanzu/velero/cmd/velero',
    binary: 'velero',
    versionArgs: ['version', '--client-only'],
    boxOnly: true,
    ldflags: (version) => [`-X github.com/vmware-tanzu/velero/pkg/buildinfo.Version=${version}`],
  },
  'velero-plugin-for-aws': {
    name: 'velero-plugin-for-aws',
    // Velero's object store plugin for S3 (MinIO in the box); Velero starts it from its plugin folder
    module: 'github.com/vmware-tanzu/velero-plugin-for-aws',
    pkg: 'github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws',
    binary: 'velero-plugin-for-aws',
    versionArgs: ['--help'],
    boxOnly: true,
  },
};
