// Choosing snapshots the way restic's command line does: the latest one matching hosts / tags / paths,
// or the one whose id starts with a given prefix. Pure functions over already-loaded snapshots.
import { posix } from 'node:path';
import type { ID } from '../ids/id.ts';
import { shortID } from '../ids/id.ts';
import type { Snapshot } from './snapshot.ts';

export interface SnapshotEntry {
  id: ID;
  snapshot: Snapshot;
}

export interface SnapshotFilter {
  /** any of these hostnames; empty or absent matches all */
  hosts?: readonly string[];
  /**
   * Tag lists, restic's `--tag a,b --tag c`: a snapshot matches when it has every tag of at least one list.
   * A list holding only "" matches snapshots without tags. Empty or absent matches all.
   */
  tags?: readonly (readonly string[])[];
  /** absolute paths the snapshot must all contain */
  paths?: readonly string[];
}

export class SnapshotNotFoundError extends Error {}

export class AmbiguousSnapshotIDError extends Error {}

function cleanPath(p: string): string {
  if (!p.startsWith('/')) throw new Error(`snapshot filter path "${p}" must be absolute`);
  const clean = posix.normalize(p);
  return clean.length > 1 && clean.endsWith('/') ? clean.slice(0, -1) : clean;
}

function hasTags(sn: Snapshot, list: readonly string[]): boolean {
  return list.every((tag) => (tag === '' ? sn.tags.length === 0 : sn.tags.includes(tag)));
}

export function matchesFilter(sn: Snapshot, filter: SnapshotFilter): boolean {
  const { hosts = [], tags = [], paths = [] } = filter;
  if (hosts.length > 0 && !hosts.includes(sn.hostname)) return false;
  if (tags.length > 0 && !tags.some((list) => hasTags(sn, list))) return false;
  return paths.every((p) => sn.paths.includes(cleanPath(p)));
}

function describe(filter: SnapshotFilter): string {
  const parts: string[] = [];
  if (filter.hosts?.length) parts.push(`hosts ${filter.hosts.join(', ')}`);
  if (filter.tags?.length) parts.push(`tags ${filter.tags.map((l) => l.join('+')).join(' or ')}`);
  if (filter.paths?.length) parts.push(`paths ${filter.paths.join(', ')}`);
  return parts.length === 0 ? 'any snapshot' : parts.join('; ');
}

/**
 * The newest snapshot matching the filter, ignoring snapshots dated after `nowNs` (clock skew between
 * writers) as restic does. Equal times are broken by id, so the answer never depends on listing order.
 */
export function findLatest(
  entries: Iterable<SnapshotEntry>,
  filter: SnapshotFilter = {},
  nowNs: bigint = BigInt(Date.now()) * 1_000_000n,
): SnapshotEntry {
  let latest: SnapshotEntry | undefined;
  for (const e of entries) {
    if (e.snapshot.time.ns > nowNs || !matchesFilter(e.snapshot, filter)) continue;
    const t = e.snapshot.time.ns;
    if (latest === undefined || t > latest.snapshot.time.ns || (t === latest.snapshot.time.ns && e.id > latest.id))
      latest = e;
  }
  if (latest === undefined) throw new SnapshotNotFoundError(`no snapshot matches ${describe(filter)}`);
  return latest;
}

/** The one id that starts with `prefix` (a full id matches itself). */
export function resolveSnapshotID(ids: Iterable<ID>, prefix: string): ID {
  if (!/^[0-9a-f]{1,64}$/.test(prefix))
    throw new Error(`"${prefix}" is not a snapshot id or id prefix (1 to 64 lowercase hex digits)`);
  const matches: ID[] = [];
  for (const id of ids) if (id.startsWith(prefix)) matches.push(id);
  if (matches.length === 1) return matches[0];
  if (matches.length === 0) throw new SnapshotNotFoundError(`no snapshot id starts with "${prefix}"`);
  const shown = matches.slice(0, 5).map(shortID).join(', ');
  throw new AmbiguousSnapshotIDError(
    `snapshot id prefix "${prefix}" is ambiguous: it matches ${matches.length} snapshots (${shown}${matches.length > 5 ? ', ...' : ''})`,
  );
}

/** restic's snapshot argument: "latest" (with the filter) or an id prefix. */
export function selectSnapshot(
  entries: readonly SnapshotEntry[],
  spec: string,
  filter: SnapshotFilter = {},
  nowNs?: bigint,
): SnapshotEntry {
  if (spec === 'latest') return findLatest(entries, filter, nowNs);
  const id = resolveSnapshotID(
    entries.map((e) => e.id),
    spec,
  );
  return entries.find((e) => e.id === id)!;
}

/**
 * restic's list of snapshot arguments (copy, and any command taking several): each id prefix or "latest" (with the
 * filter) names one snapshot, whatever the filter says of it; no argument means every snapshot the filter matches.
 * Each once, in the order of `entries`.
 */
export function selectSnapshots(
  entries: readonly SnapshotEntry[],
  specs: readonly string[],
  filter: SnapshotFilter = {},
  nowNs?: bigint,
): SnapshotEntry[] {
  if (specs.length === 0) return entries.filter((e) => matchesFilter(e.snapshot, filter));
  const named = new Set(specs.map((spec) => selectSnapshot(entries, spec, filter, nowNs)));
  return entries.filter((e) => named.has(e));
}
