// A node as the JSON object restic's Node.MarshalJSON writes: Go struct field order, Go's omitempty
// (zero numbers, empty strings and empty slices left out; times, uid, gid and content always present),
// the name passed through strconv.Quote first, and linktarget_raw (base64) beside linktarget when the
// target is not valid UTF-8. Decoding accepts what restic 0.14 to 0.18 write and skips unknown fields.
import { isUtf8 } from 'node:buffer';
import type { ID } from '../ids/id.ts';
import { goCompactJson, goJsonBytes, goJsonString, goJsonStringFromBytes, parseGoBase64 } from './gojson.ts';
import { goQuoteInner, goUnquoteInner } from './goquote.ts';
import { utf8Bytes } from './goutf8.ts';
import { clampGoTimeYear, formatGoTime, goZeroTime, parseGoTime } from './gotime.ts';
import type { GoTime } from './gotime.ts';
import type { JsonReader } from './jsonreader.ts';
import { displayName, newNode, nodeTypes } from './node.ts';
import type { ExtendedAttribute, NodeType, TreeNode } from './node.ts';

function timeField(t: GoTime): string {
  return `"${formatGoTime(clampGoTimeYear(t))}"`;
}

function extendedAttributesField(attrs: readonly ExtendedAttribute[]): string {
  return '[' + attrs.map((a) => `{"name":${goJsonString(a.name)},"value":${goJsonBytes(a.value)}}`).join(',') + ']';
}

/** Go writes map keys sorted bytewise (UTF-8 order, which differs from JS string order above U+FFFF). */
function genericAttributesField(attrs: ReadonlyMap<string, string>): string {
  const keys = [...attrs.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return '{' + keys.map((k) => `${goJsonString(k)}:${goCompactJson(attrs.get(k)!)}`).join(',') + '}';
}

function idListField(ids: readonly ID[] | null): string {
  return ids === null ? 'null' : '[' + ids.map((id) => `"${id}"`).join(',') + ']';
}

export function encodeNode(node: TreeNode): string {
  const f: string[] = [`"name":${goJsonString(goQuoteInner(node.name))}`, `"type":"${node.type}"`];
  if (node.mode !== 0) f.push(`"mode":${node.mode >>> 0}`);
  f.push(`"mtime":${timeField(node.mtime)}`, `"atime":${timeField(node.atime)}`, `"ctime":${timeField(node.ctime)}`);
  f.push(`"uid":${node.uid >>> 0}`, `"gid":${node.gid >>> 0}`);
  if (node.user !== '') f.push(`"user":${goJsonString(node.user)}`);
  if (node.group !== '') f.push(`"group":${goJsonString(node.group)}`);
  if (node.inode !== 0n) f.push(`"inode":${node.inode}`);
  if (node.deviceId !== 0n) f.push(`"device_id":${node.deviceId}`);
  if (node.size !== 0n) f.push(`"size":${node.size}`);
  if (node.links !== 0n) f.push(`"links":${node.links}`);
  if (node.linkTarget.length > 0) {
    f.push(`"linktarget":${goJsonStringFromBytes(node.linkTarget)}`);
    if (!isUtf8(node.linkTarget)) f.push(`"linktarget_raw":${goJsonBytes(node.linkTarget)}`);
  }
  if (node.extendedAttributes.length > 0)
    f.push(`"extended_attributes":${extendedAttributesField(node.extendedAttributes)}`);
  if (node.genericAttributes.size > 0) f.push(`"generic_attributes":${genericAttributesField(node.genericAttributes)}`);
  if (node.device !== 0n) f.push(`"device":${node.device}`);
  f.push(`"content":${idListField(node.content)}`);
  if (node.subtree !== null) f.push(`"subtree":"${node.subtree}"`);
  if (node.error !== '') f.push(`"error":${goJsonString(node.error)}`);
  return '{' + f.join(',') + '}';
}

function readId(r: JsonReader, field: string): ID {
  const text = r.readString();
  if (!/^[0-9a-fA-F]{64}$/.test(text))
    throw new Error(`tree node field "${field}" holds ${JSON.stringify(text)}, which is not a 64-digit hex id`);
  return text.toLowerCase();
}

function readIdList(r: JsonReader, field: string): ID[] | null {
  if (r.readNull()) return null;
  const ids: ID[] = [];
  r.readArray(() => ids.push(readId(r, field)));
  return ids;
}

function readTime(r: JsonReader): GoTime {
  return r.readNull() ? goZeroTime : parseGoTime(r.readString());
}

function readOptionalString(r: JsonReader): string {
  return r.readNull() ? '' : r.readString();
}

function readExtendedAttributes(r: JsonReader): ExtendedAttribute[] {
  const attrs: ExtendedAttribute[] = [];
  if (r.readNull()) return attrs;
  r.readArray(() => {
    const attr: ExtendedAttribute = { name: '', value: null };
    r.readObject((key) => {
      if (key === 'name') attr.name = readOptionalString(r);
      else if (key === 'value')
        attr.value = r.readNull() ? null : parseGoBase64(r.readString(), 'an extended attribute value');
      else r.skip();
    });
    attrs.push(attr);
  });
  return attrs;
}

function readGenericAttributes(r: JsonReader): Map<string, string> {
  const attrs = new Map<string, string>();
  if (!r.readNull()) r.readObject((key) => attrs.set(key, r.readRaw()));
  return attrs;
}

function readType(r: JsonReader): NodeType {
  const type = readOptionalString(r);
  if (!(nodeTypes as readonly string[]).includes(type))
    throw new Error(`tree node has unknown type ${JSON.stringify(type)}`);
  return type as NodeType;
}

function uint64(r: JsonReader, field: string): bigint {
  return r.readNull() ? 0n : r.readUint64(field);
}

function uint32(r: JsonReader, field: string): number {
  return r.readNull() ? 0 : r.readUint32(field);
}

/** Reads one node object; fields restic may add later are skipped. */
export function decodeNode(r: JsonReader): TreeNode {
  const n = newNode(new Uint8Array(0), 'file');
  let rawLinkTarget: Uint8Array | null = null;
  let typeSeen = false;
  r.readObject((key) => {
    switch (key) {
      case 'name':
        n.name = goUnquoteInner(readOptionalString(r));
        break;
      case 'type':
        n.type = readType(r);
        typeSeen = true;
        break;
      case 'mode':
        n.mode = uint32(r, key);
        break;
      case 'mtime':
        n.mtime = readTime(r);
        break;
      case 'atime':
        n.atime = readTime(r);
        break;
      case 'ctime':
        n.ctime = readTime(r);
        break;
      case 'uid':
        n.uid = uint32(r, key);
        break;
      case 'gid':
        n.gid = uint32(r, key);
        break;
      case 'user':
        n.user = readOptionalString(r);
        break;
      case 'group':
        n.group = readOptionalString(r);
        break;
      case 'inode':
        n.inode = uint64(r, key);
        break;
      case 'device_id':
        n.deviceId = uint64(r, key);
        break;
      case 'size':
        n.size = uint64(r, key);
        break;
      case 'links':
        n.links = uint64(r, key);
        break;
      case 'linktarget':
        n.linkTarget = utf8Bytes(readOptionalString(r));
        break;
      case 'linktarget_raw':
        rawLinkTarget = r.readNull() ? null : parseGoBase64(r.readString(), key);
        break;
      case 'extended_attributes':
        n.extendedAttributes = readExtendedAttributes(r);
        break;
      case 'generic_attributes':
        n.genericAttributes = readGenericAttributes(r);
        break;
      case 'device':
        n.device = uint64(r, key);
        break;
      case 'content':
        n.content = readIdList(r, key);
        break;
      case 'subtree':
        n.subtree = r.readNull() ? null : readId(r, key);
        break;
      case 'error':
        n.error = readOptionalString(r);
        break;
      default:
        r.skip();
    }
  });
  if (!typeSeen) throw new Error(`tree node "${displayName(n.name)}" has no type`);
  // restic keeps a target that is not valid UTF-8 in linktarget_raw; linktarget then holds U+FFFD for it.
  if (rawLinkTarget !== null) n.linkTarget = rawLinkTarget;
  return n;
}
