// What the runner needs from each tool under test: the command lines for one repository's life. Commands are
// built, not run, so the runner measures every tool the same way (bench/measure/child.ts).
import type { Command } from '../measure/child.ts';

export type PeerName = 'ferry' | 'restic' | 'kopia';

/** Where a repository lives: a local folder, or a fresh bucket on the benchmark's MinIO. */
export type Place =
  | { kind: 'local'; dir: string }
  | { kind: 's3'; endpoint: string; bucket: string; accessKey: string; secretKey: string };

/** what was backed up; `snapshot` picks a snapshot by id where the peer can (else the latest) */
export type Source = ({ path: string } | { stream: string }) & { snapshot?: string };

export interface RepoCommands {
  /** unmeasured set-up commands that create the repository (and configure it, for kopia) */
  init(): Command[];
  backup(path: string): Command;
  /** one file (a block image) backed up as a stream named `name` */
  backupStream(file: string, name: string): Command;
  /**
   * the stream backed up again against the latest snapshot, reading only the byte ranges listed in `rangesFile`
   * (changed-block tracking); only a peer that can
   */
  backupChanged?(file: string, name: string, rangesFile: string): Command;
  /** restores the latest snapshot of `source` (what was backed up) into the empty folder `target` */
  restore(source: Source, target: string): Command;
  /** lists the snapshots: little work beyond what every command pays first (start-up, key derivation) */
  snapshots(): Command;
}

export interface Peer {
  name: PeerName;
  /** the first line the binary prints about its version */
  version(): Promise<string>;
  /** `work` is a private folder for this repository's caches, config and logs */
  repo(place: Place, work: string): RepoCommands;
}

export const benchPassword = 'ferry-bench-password';

/** The environment every child starts from: nothing of the caller's leaks in but PATH and HOME. */
export function baseEnv(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
}
