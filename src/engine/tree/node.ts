// One entry of a directory as restic stores it in a tree blob (restic's Node, repository format v2).
// Names and symlink targets are raw bytes: Linux names need not be UTF-8, and restic keeps them exact.
// Numbers that are uint64 in restic are bigint here so that nothing is rounded.
import type { ID } from '../ids/id.ts';
import { goZeroTime } from './gotime.ts';
import type { GoTime } from './gotime.ts';

export type NodeType = 'file' | 'dir' | 'symlink' | 'dev' | 'chardev' | 'fifo' | 'socket' | 'irregular';

export const nodeTypes: readonly NodeType[] = [
  'file',
  'dir',
  'symlink',
  'dev',
  'chardev',
  'fifo',
  'socket',
  'irregular',
];

export interface ExtendedAttribute {
  name: string;
  /** null is Go's nil slice (written as null); restic itself always reads a value, possibly empty. */
  value: Uint8Array | null;
}

export interface TreeNode {
  name: Uint8Array;
  type: NodeType;
  /** Go's os.FileMode (see mode.ts), not a POSIX st_mode */
  mode: number;
  mtime: GoTime;
  atime: GoTime;
  ctime: GoTime;
  uid: number;
  gid: number;
  user: string;
  group: string;
  inode: bigint;
  /** st_dev of the file system holding the entry */
  deviceId: bigint;
  size: bigint;
  links: bigint;
  /** raw bytes; empty unless the node is a symlink */
  linkTarget: Uint8Array;
  extendedAttributes: ExtendedAttribute[];
  /** restic's OS-specific attributes (Windows only so far), each kept as the raw JSON restic wrote */
  genericAttributes: Map<string, string>;
  /** st_rdev of a block or character device */
  device: bigint;
  /** data blob ids of a file; null for every other type, as restic writes it */
  content: ID[] | null;
  /** tree blob id of a directory */
  subtree: ID | null;
  /** why restic could not read the entry completely */
  error: string;
}

const noBytes = new Uint8Array(0);

/** A node with Go's zero values everywhere except the given fields. */
export function newNode(
  name: Uint8Array,
  type: NodeType,
  fields: Partial<Omit<TreeNode, 'name' | 'type'>> = {},
): TreeNode {
  return {
    name,
    type,
    mode: 0,
    mtime: goZeroTime,
    atime: goZeroTime,
    ctime: goZeroTime,
    uid: 0,
    gid: 0,
    user: '',
    group: '',
    inode: 0n,
    deviceId: 0n,
    size: 0n,
    links: 0n,
    linkTarget: noBytes,
    extendedAttributes: [],
    genericAttributes: new Map(),
    device: 0n,
    content: null,
    subtree: null,
    error: '',
    ...fields,
  };
}

/** Byte order of names, the order restic requires inside a tree (Go compares strings bytewise). */
export function compareNames(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

export function sortNodes(nodes: TreeNode[]): TreeNode[] {
  return nodes.sort((a, b) => compareNames(a.name, b.name));
}

/** A name for messages: UTF-8 where it is, with invalid bytes shown as U+FFFD. */
export function displayName(name: Uint8Array): string {
  return Buffer.from(name.buffer, name.byteOffset, name.byteLength).toString('utf8');
}
