// The real peers ferry is tested against. Each has a tiny wrapper Go module next to this file
// (test/tools/<name>/go.mod + go.sum) whose `tool` line pins the peer and, through go.sum, every dependency.
// Bumping a peer is `go get -tool <module>@<version>` in its folder; the cache folder name follows the new version.
// Wrapper modules instead of `go install module@version`: the Go proxy reachable here refuses the version list
// that `go install` fetches to check for deprecation, and the wrappers pin the dependency graph as well.

export type ToolName = 'restic' | 'minio' | 'kopia';

export interface ToolSpec {
  name: ToolName;
  /** Go module of the peer; its version is read from the wrapper's go.mod */
  module: string;
  /** import path of the peer's `main` package */
  pkg: string;
  binary: string;
  /** arguments that make the binary print its version */
  versionArgs: string[];
  /** only the benchmarks (bench/) use it, so `npm run tools` skips it unless named */
  benchOnly?: boolean;
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
};
