// Extended attributes through the `attr` package's getfattr / setfattr, since Node has no xattr API.
// Requests are batched so one process serves hundreds of files (see batcher.ts), and both tools speak
// the same dump format: "# file: PATH" then "NAME=0sBASE64" lines, where PATH and NAME escape awkward
// bytes as \ooo. Reading passes paths as arguments, so a path that is not valid UTF-8 cannot be read
// (Node can only hand strings to a child); writing goes through the dump on stdin and has no such limit.
//
// Differences from restic: getfattr lists a file's attributes sorted by name where restic keeps the
// file system's order, so a tree holding extended attributes can differ from restic's in that order.
import { isUtf8 } from 'node:buffer';
import type { ExtendedAttribute } from '../tree/node.ts';
import { Batcher } from './batcher.ts';
import { runTool } from './tool.ts';

const readArgs = ['--absolute-names', '--no-dereference', '--dump', '--match=-', '--encoding=base64', '--'];

/** Dump-format escaping: everything but printable ASCII, plus backslash and "=" (which ends a name). */
export function escapeDumpText(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    out += b > 0x20 && b < 0x7f && b !== 0x5c && b !== 0x3d ? String.fromCharCode(b) : '\\' + b.toString(8).padStart(3, '0');
  }
  return out;
}

/** Inverse of the tools' escaping; `text` is the raw line bytes read as latin1. */
export function unescapeDumpText(text: string): Uint8Array {
  const unescaped = text.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8) & 0xff));
  return new Uint8Array(Buffer.from(unescaped, 'latin1'));
}

/** Parses a dump into attributes per path; the key is the path's bytes as a latin1 string. */
export function parseDump(dump: Buffer): Map<string, ExtendedAttribute[]> {
  const files = new Map<string, ExtendedAttribute[]>();
  let current: ExtendedAttribute[] | undefined;
  for (const line of dump.toString('latin1').split('\n')) {
    if (line.startsWith('# file: ')) {
      current = [];
      files.set(Buffer.from(unescapeDumpText(line.slice(8))).toString('latin1'), current);
      continue;
    }
    if (line === '' || line.startsWith('#') || current === undefined) continue;
    const eq = line.indexOf('=');
    const name = Buffer.from(unescapeDumpText(eq < 0 ? line : line.slice(0, eq))).toString('utf8');
    const value = eq < 0 ? '' : line.slice(eq + 1);
    if (value !== '' && !value.startsWith('0s')) throw new Error(`getfattr printed attribute ${name} in an unexpected encoding`);
    const bytes = Buffer.from(value.slice(2), 'base64');
    current.push({ name, value: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
  }
  return files;
}

export function formatDump(entries: ReadonlyArray<{ path: Uint8Array; attrs: readonly ExtendedAttribute[] }>): Buffer {
  let out = '';
  for (const { path, attrs } of entries) {
    out += `# file: ${escapeDumpText(path)}\n`;
    for (const a of attrs) {
      const value = a.value ?? new Uint8Array(0);
      out += `${escapeDumpText(Buffer.from(a.name, 'utf8'))}=0s${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}\n`;
    }
    out += '\n';
  }
  return Buffer.from(out, 'latin1');
}

/** Whether ferry can read extended attributes under `dir`: null when it can, otherwise the reason. */
export async function xattrUnsupportedReason(dir: string): Promise<string | null> {
  try {
    const r = await runTool('getfattr', [...readArgs, dir]);
    if (/Operation not supported/.test(r.stderr)) return `the file system at ${dir} does not support extended attributes`;
    if (r.code !== 0) return `getfattr failed on ${dir}: ${r.stderr.trim()}`;
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

export type Warn = (message: string) => void;

const latin1Key = (path: Uint8Array): string => Buffer.from(path.buffer, path.byteOffset, path.byteLength).toString('latin1');

/** Reads the extended attributes of many files with few getfattr processes. */
export class XattrReader {
  readonly #batcher: Batcher<Buffer, ExtendedAttribute[]>;
  readonly #warn: Warn;

  constructor(warn: Warn = () => undefined) {
    this.#warn = warn;
    this.#batcher = new Batcher((paths) => this.#readBatch(paths));
  }

  /** The attributes of `path` itself (a symlink is not followed); none when it has none. */
  read(path: Buffer): Promise<ExtendedAttribute[]> {
    if (!isUtf8(path)) {
      this.#warn(`extended attributes of ${path.toString('utf8')} were not read: the path is not valid UTF-8`);
      return Promise.resolve([]);
    }
    return this.#batcher.request(path);
  }

  async #readBatch(paths: Buffer[]): Promise<ExtendedAttribute[][]> {
    const r = await runTool('getfattr', [...readArgs, ...paths.map((p) => p.toString('utf8'))]);
    for (const line of r.stderr.split('\n')) {
      if (line !== '' && !/Operation not supported/.test(line)) this.#warn(line);
    }
    const found = parseDump(r.stdout);
    return paths.map((p) => found.get(latin1Key(p)) ?? []);
  }
}

/** Sets extended attributes on many files with few setfattr processes. */
export class XattrWriter {
  readonly #batcher: Batcher<{ path: Buffer; attrs: readonly ExtendedAttribute[] }, Error | null>;

  constructor() {
    this.#batcher = new Batcher((entries) => writeBatch(entries));
  }

  /** Sets the attributes on `path` itself (a symlink is not followed). */
  async write(path: Buffer, attrs: readonly ExtendedAttribute[]): Promise<void> {
    if (attrs.length === 0) return;
    const err = await this.#batcher.request({ path, attrs });
    if (err) throw err;
  }
}

async function writeBatch(entries: Array<{ path: Buffer; attrs: readonly ExtendedAttribute[] }>): Promise<Array<Error | null>> {
  const r = await runTool('setfattr', ['--no-dereference', '--restore=-'], formatDump(entries));
  if (r.code === 0) return entries.map(() => null);
  // setfattr goes on after a failing file and names it, so only the files it names have failed.
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  const errors = entries.map(({ path }) => {
    const line = lines.find((l) => l.startsWith(`setfattr: ${path.toString('utf8')}: `));
    return line ? new Error(`could not set extended attributes on ${path.toString('utf8')}: ${line.slice(line.lastIndexOf(': ') + 2)}`) : null;
  });
  if (errors.every((e) => e === null)) return entries.map(() => new Error(`setfattr failed: ${lines.join('; ')}`));
  return errors;
}
