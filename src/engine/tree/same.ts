// Whether two directories' nodes are equal in every field a tree blob records. An incremental backup asks this of a
// directory's fresh nodes and its parent snapshot's nodes: when they are equal, the parent's tree blob already holds
// these bytes' meaning, so its id is reused without encoding and hashing the directory again.
import type { GoTime } from './gotime.ts';
import type { ExtendedAttribute, TreeNode } from './node.ts';

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameTime(a: GoTime, b: GoTime): boolean {
  return a === b || (a.ns === b.ns && a.offset === b.offset);
}

function sameIds(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameXattrs(a: readonly ExtendedAttribute[], b: readonly ExtendedAttribute[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i].value;
    const y = b[i].value;
    if (a[i].name !== b[i].name || (x === null || y === null ? x !== y : !sameBytes(x, y))) return false;
  }
  return true;
}

function sameGeneric(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** Equal in every field encodeNode writes, so both encode to the same bytes. */
export function sameNode(a: TreeNode, b: TreeNode): boolean {
  return (
    a.type === b.type &&
    a.mode === b.mode &&
    a.size === b.size &&
    sameTime(a.mtime, b.mtime) &&
    sameTime(a.ctime, b.ctime) &&
    sameTime(a.atime, b.atime) &&
    a.inode === b.inode &&
    a.deviceId === b.deviceId &&
    a.links === b.links &&
    a.uid === b.uid &&
    a.gid === b.gid &&
    a.user === b.user &&
    a.group === b.group &&
    a.device === b.device &&
    a.subtree === b.subtree &&
    a.error === b.error &&
    sameIds(a.content, b.content) &&
    sameBytes(a.name, b.name) &&
    sameBytes(a.linkTarget, b.linkTarget) &&
    sameXattrs(a.extendedAttributes, b.extendedAttributes) &&
    sameGeneric(a.genericAttributes, b.genericAttributes)
  );
}

/** Equal node lists, in the same order: the directory's tree blob would be the same bytes. */
export function sameNodes(a: readonly TreeNode[], b: readonly TreeNode[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameNode(a[i], b[i])) return false;
  return true;
}
