// A snapshot file as restic writes it (json.Marshal of its Snapshot struct, no trailing newline):
// Go field order and omitempty rules, times in RFC 3339 with the zone they were taken in, and the
// summary restic 0.17 added. Decoding accepts what restic 0.14 to 0.18 write and skips unknown fields.
import type { ID } from '../ids/id.ts';
import { goJsonString } from '../tree/gojson.ts';
import { utf8Bytes } from '../tree/goutf8.ts';
import { formatGoTime, goZeroTime, parseGoTime } from '../tree/gotime.ts';
import type { GoTime } from '../tree/gotime.ts';
import { JsonReader } from '../tree/jsonreader.ts';

/** Statistics of the backup that made the snapshot, under restic's names (restic >= 0.17). */
export interface SnapshotSummary {
  backupStart: GoTime;
  backupEnd: GoTime;
  filesNew: number;
  filesChanged: number;
  filesUnmodified: number;
  dirsNew: number;
  dirsChanged: number;
  dirsUnmodified: number;
  dataBlobs: number;
  treeBlobs: number;
  dataAdded: number;
  dataAddedPacked: number;
  totalFilesProcessed: number;
  totalBytesProcessed: number;
}

export interface Snapshot {
  time: GoTime;
  parent: ID | null;
  tree: ID;
  paths: string[];
  hostname: string;
  username: string;
  uid: number;
  gid: number;
  excludes: string[];
  tags: string[];
  /** the snapshot this one was rewritten or copied from */
  original: ID | null;
  programVersion: string;
  summary: SnapshotSummary | null;
}

export function newSnapshot(tree: ID, time: GoTime, fields: Partial<Omit<Snapshot, 'tree' | 'time'>> = {}): Snapshot {
  return {
    time,
    parent: null,
    tree,
    paths: [],
    hostname: '',
    username: '',
    uid: 0,
    gid: 0,
    excludes: [],
    tags: [],
    original: null,
    programVersion: '',
    summary: null,
    ...fields,
  };
}

type SummaryCounter = Exclude<keyof SnapshotSummary, 'backupStart' | 'backupEnd'>;

// restic's JSON name and our field for each summary counter, in restic's order.
const summaryCounters: ReadonlyArray<[string, SummaryCounter]> = [
  ['files_new', 'filesNew'],
  ['files_changed', 'filesChanged'],
  ['files_unmodified', 'filesUnmodified'],
  ['dirs_new', 'dirsNew'],
  ['dirs_changed', 'dirsChanged'],
  ['dirs_unmodified', 'dirsUnmodified'],
  ['data_blobs', 'dataBlobs'],
  ['tree_blobs', 'treeBlobs'],
  ['data_added', 'dataAdded'],
  ['data_added_packed', 'dataAddedPacked'],
  ['total_files_processed', 'totalFilesProcessed'],
  ['total_bytes_processed', 'totalBytesProcessed'],
];

function stringList(list: readonly string[]): string {
  return '[' + list.map(goJsonString).join(',') + ']';
}

function encodeSummary(s: SnapshotSummary): string {
  const f = [`"backup_start":"${formatGoTime(s.backupStart)}"`, `"backup_end":"${formatGoTime(s.backupEnd)}"`];
  for (const [json, field] of summaryCounters) f.push(`"${json}":${s[field]}`);
  return '{' + f.join(',') + '}';
}

export function encodeSnapshot(sn: Snapshot): Uint8Array {
  const f = [`"time":"${formatGoTime(sn.time)}"`];
  if (sn.parent !== null) f.push(`"parent":"${sn.parent}"`);
  f.push(`"tree":"${sn.tree}"`, `"paths":${stringList(sn.paths)}`);
  if (sn.hostname !== '') f.push(`"hostname":${goJsonString(sn.hostname)}`);
  if (sn.username !== '') f.push(`"username":${goJsonString(sn.username)}`);
  if (sn.uid !== 0) f.push(`"uid":${sn.uid >>> 0}`);
  if (sn.gid !== 0) f.push(`"gid":${sn.gid >>> 0}`);
  if (sn.excludes.length > 0) f.push(`"excludes":${stringList(sn.excludes)}`);
  if (sn.tags.length > 0) f.push(`"tags":${stringList(sn.tags)}`);
  if (sn.original !== null) f.push(`"original":"${sn.original}"`);
  if (sn.programVersion !== '') f.push(`"program_version":${goJsonString(sn.programVersion)}`);
  if (sn.summary !== null) f.push(`"summary":${encodeSummary(sn.summary)}`);
  return utf8Bytes('{' + f.join(',') + '}');
}

function readId(r: JsonReader, field: string): ID | null {
  if (r.readNull()) return null;
  const text = r.readString();
  if (!/^[0-9a-fA-F]{64}$/.test(text))
    throw new Error(`snapshot field "${field}" holds ${JSON.stringify(text)}, which is not a 64-digit hex id`);
  return text.toLowerCase();
}

function readStrings(r: JsonReader): string[] {
  return r.readNull() ? [] : r.readStringArray();
}

function readString(r: JsonReader): string {
  return r.readNull() ? '' : r.readString();
}

function readTime(r: JsonReader): GoTime {
  return r.readNull() ? goZeroTime : parseGoTime(r.readString());
}

function readSummary(r: JsonReader): SnapshotSummary | null {
  if (r.readNull()) return null;
  const s: SnapshotSummary = {
    backupStart: goZeroTime,
    backupEnd: goZeroTime,
    filesNew: 0,
    filesChanged: 0,
    filesUnmodified: 0,
    dirsNew: 0,
    dirsChanged: 0,
    dirsUnmodified: 0,
    dataBlobs: 0,
    treeBlobs: 0,
    dataAdded: 0,
    dataAddedPacked: 0,
    totalFilesProcessed: 0,
    totalBytesProcessed: 0,
  };
  const counters = new Map(summaryCounters);
  r.readObject((key) => {
    const counter = counters.get(key);
    if (key === 'backup_start') s.backupStart = readTime(r);
    else if (key === 'backup_end') s.backupEnd = readTime(r);
    else if (counter === undefined) r.skip();
    else if (!r.readNull()) s[counter] = r.readSafeInteger(key);
  });
  return s;
}

export function decodeSnapshot(bytes: Uint8Array): Snapshot {
  const r = new JsonReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), 'snapshot');
  const sn = newSnapshot('', goZeroTime);
  let tree: ID | null = null;
  r.readObject((key) => {
    switch (key) {
      case 'time':
        sn.time = readTime(r);
        break;
      case 'parent':
        sn.parent = readId(r, key);
        break;
      case 'tree':
        tree = readId(r, key);
        break;
      case 'paths':
        sn.paths = readStrings(r);
        break;
      case 'hostname':
        sn.hostname = readString(r);
        break;
      case 'username':
        sn.username = readString(r);
        break;
      case 'uid':
        sn.uid = r.readNull() ? 0 : r.readUint32(key);
        break;
      case 'gid':
        sn.gid = r.readNull() ? 0 : r.readUint32(key);
        break;
      case 'excludes':
        sn.excludes = readStrings(r);
        break;
      case 'tags':
        sn.tags = readStrings(r);
        break;
      case 'original':
        sn.original = readId(r, key);
        break;
      case 'program_version':
        sn.programVersion = readString(r);
        break;
      case 'summary':
        sn.summary = readSummary(r);
        break;
      default:
        r.skip();
    }
  });
  r.end();
  if (tree === null) throw new Error('snapshot has no tree id');
  sn.tree = tree;
  return sn;
}
