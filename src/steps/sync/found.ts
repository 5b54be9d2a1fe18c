// The backups a repository holds, read from its snapshots' tags alone (src/steps/data/tags.ts writes them): the
// DataUpload each snapshot was made for, its PVC, when it was taken, whether it was a block volume, its size. The
// repository is another cluster's and may have been written by anyone holding its password, so every name is
// checked before it names anything on this cluster: a snapshot whose tags do not name a valid DataUpload and PVC
// of this repository's namespace is passed over, with the reason.
import type { DataUploadStatus, TransferStats } from '../../shared/api/types.ts';
import type { SnapshotEntry } from '../../engine/operations/snapshots.ts';
import { ferryTag } from '../data/tags.ts';

export interface FoundBackup {
  /** the DataUpload the snapshot was made for */
  name: string;
  pvc: string;
  snapshotID: string;
  time: Date;
  volumeMode: NonNullable<DataUploadStatus['volumeMode']>;
  stats: TransferStats;
}

export interface Found {
  backups: FoundBackup[];
  /** why each snapshot naming a DataUpload was passed over */
  passed: string[];
}

const objectName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const maxObjectName = 253;

function validName(text: string | undefined): text is string {
  return text !== undefined && text.length <= maxObjectName && objectName.test(text);
}

/** What a tag says, quoted short enough for a status message. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}

function seconds(ns: bigint): number {
  return Number(ns / 1_000_000n) / 1000;
}

/** A block volume is backed up as one file at the snapshot's root named after its PVC (transfer.ts). */
function volumeModeOf(entry: SnapshotEntry, pvc: string): FoundBackup['volumeMode'] {
  const { paths } = entry.snapshot;
  return paths.length === 1 && paths[0] === `/${pvc}.img` ? 'Block' : 'Filesystem';
}

function statsOf(entry: SnapshotEntry): TransferStats {
  const s = entry.snapshot.summary;
  return {
    files: s?.totalFilesProcessed ?? 0,
    bytes: s?.totalBytesProcessed ?? 0,
    bytesAdded: s?.dataAdded ?? 0,
    bytesStored: s?.dataAddedPacked ?? 0,
    durationSeconds: s ? Math.max(0, seconds(s.backupEnd.ns) - seconds(s.backupStart.ns)) : 0,
  };
}

/** The backups of `namespace`'s repository; of two snapshots for one DataUpload name, the newer. */
export function foundBackups(entries: readonly SnapshotEntry[], namespace: string): Found {
  const byName = new Map<string, FoundBackup>();
  const passed: string[] = [];
  for (const entry of entries) {
    const { tags } = entry.snapshot;
    const name = ferryTag(tags, 'dataupload');
    if (name === undefined) continue;
    const short = entry.id.slice(0, 8);
    const pvc = ferryTag(tags, 'pvc');
    const taggedNamespace = ferryTag(tags, 'namespace');
    if (!validName(name)) {
      passed.push(`snapshot ${short} names DataUpload ${quoted(name)}, not a valid object name`);
      continue;
    }
    if (!validName(pvc)) {
      passed.push(`snapshot ${short} of DataUpload ${name} names no valid PVC`);
      continue;
    }
    if (taggedNamespace !== undefined && taggedNamespace !== namespace) {
      passed.push(`snapshot ${short} of DataUpload ${name} belongs to namespace ${quoted(taggedNamespace)}`);
      continue;
    }
    const found: FoundBackup = {
      name,
      pvc,
      snapshotID: entry.id,
      time: new Date(Number(entry.snapshot.time.ns / 1_000_000n)),
      volumeMode: volumeModeOf(entry, pvc),
      stats: statsOf(entry),
    };
    const seen = byName.get(name);
    if (!seen || seen.time < found.time) byName.set(name, found);
  }
  return { backups: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), passed };
}
