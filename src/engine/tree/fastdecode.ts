// The common tree blob decoded through the native JSON.parse, several times faster than the exact pull reader
// (an incremental backup decodes every directory of its parent snapshot). It answers only when JSON.parse is known
// to read the blob exactly as the pull reader would, and otherwise returns undefined, so the caller falls back:
// no integer of 16 or more digits (a double is exact up to 15), no fraction, exponent or sign on a number, no escaped
// surrogate (Go turns a lone one into U+FFFD), no field whose source text or base64 must be kept, and every field of
// the type the pull reader expects. Malformed blobs are left to the pull reader, which names the fault precisely.
import { isID } from '../ids/id.ts';
import { goUnquoteInner } from './goquote.ts';
import { utf8Bytes } from './goutf8.ts';
import { goZeroTime, parseGoTime } from './gotime.ts';
import type { GoTime } from './gotime.ts';
import { newNode, nodeTypes } from './node.ts';
import type { NodeType, TreeNode } from './node.ts';

/**
 * Source text JSON.parse could read differently from Go: integers of 16 or more digits, numbers with a sign, fraction
 * or exponent (a field's value follows `":`, so digits inside ids and times do not count), escaped surrogates. Numbers
 * inside arrays need no look: the arrays read here hold objects or ids, and a number there fails the type checks;
 * both readers ignore unknown fields, whatever their numbers. A match inside a name only costs the fallback.
 */
const unsafeNumber = /":\s*(?:-|\d{16}|\d+[.eE])/;
const escapedSurrogate = /\\u[dD][89a-fA-F]/;

function unsafeText(text: string): boolean {
  // most blobs have no \u escape at all, and includes() finds that faster than the pattern
  return unsafeNumber.test(text) || (text.includes('\\u') && escapedSurrogate.test(text));
}

const maxUint32 = 0xffffffff;

/** Thrown inside the fast path when a field is not what it expects (a shared value: no stack to build). */
const notSimple = new Error('not a simple tree blob');

type Raw = Record<string, unknown>;

function str(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') throw notSimple;
  return v;
}

function u32(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > maxUint32) throw notSimple;
  return v;
}

function u64(v: unknown): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw notSimple;
  return BigInt(v);
}

function time(v: unknown): GoTime {
  if (v === null || v === undefined) return goZeroTime;
  return parseGoTime(str(v));
}

function id(v: unknown): string {
  if (typeof v !== 'string' || !isID(v)) throw notSimple;
  return v;
}

function ids(v: unknown): string[] | null {
  if (v === null || v === undefined) return null;
  if (!Array.isArray(v)) throw notSimple;
  return v.map(id);
}

function empty(v: unknown): boolean {
  return v === null || v === undefined || (Array.isArray(v) && v.length === 0);
}

function node(raw: unknown): TreeNode {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw notSimple;
  const r = raw as Raw;
  const type = r.type;
  if (typeof type !== 'string' || !(nodeTypes as readonly string[]).includes(type)) throw notSimple;
  // kept as source text or base64 by the pull reader: rare outside Windows and xattr backups
  if (
    !empty(r.extended_attributes) ||
    (r.generic_attributes !== undefined && r.generic_attributes !== null) ||
    r.linktarget_raw !== undefined
  )
    throw notSimple;
  const mtime = time(r.mtime);
  const n = newNode(goUnquoteInner(str(r.name)), type as NodeType, {
    mode: u32(r.mode),
    mtime,
    atime: r.atime === r.mtime ? mtime : time(r.atime),
    ctime: time(r.ctime),
    uid: u32(r.uid),
    gid: u32(r.gid),
    user: str(r.user),
    group: str(r.group),
    inode: u64(r.inode),
    deviceId: u64(r.device_id),
    size: u64(r.size),
    links: u64(r.links),
    device: u64(r.device),
    content: ids(r.content),
    subtree: r.subtree === null || r.subtree === undefined ? null : id(r.subtree),
    error: str(r.error),
  });
  const target = str(r.linktarget);
  // most nodes have none: the node's shared empty target saves an allocation per node
  if (target !== '') n.linkTarget = utf8Bytes(target);
  return n;
}

/** The nodes of a tree blob's text, or undefined when only the exact reader may decode it. */
export function decodeTreeFast(text: string): TreeNode[] | undefined {
  const first = text.indexOf('"nodes"');
  // a repeated "nodes" key makes the pull reader join the lists, where JSON.parse keeps the last
  if (unsafeText(text) || (first >= 0 && text.indexOf('"nodes"', first + 1) >= 0)) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return undefined;
  const list = (doc as Raw).nodes;
  if (list === null || list === undefined) return [];
  if (!Array.isArray(list)) return undefined;
  try {
    return list.map(node);
  } catch {
    // not simple, or malformed: the pull reader decides, and names the first fault in document order
    return undefined;
  }
}
