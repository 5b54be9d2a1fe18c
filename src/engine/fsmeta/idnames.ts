// User and group names for numeric ids, read from /etc/passwd and /etc/group as restic's statically
// built binaries do (Go's os/user without cgo): the first entry for an id wins, an unknown id has no name.
import { readFile } from 'node:fs/promises';

function parseIdFile(text: string): Map<number, string> {
  const names = new Map<number, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('+') || line.startsWith('-')) continue;
    const fields = line.split(':');
    if (fields.length < 3 || !/^\d+$/.test(fields[2])) continue;
    const id = Number(fields[2]);
    if (!names.has(id)) names.set(id, fields[0]);
  }
  return names;
}

async function readIfPresent(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

export class IdNames {
  readonly #users: Map<number, string>;
  readonly #groups: Map<number, string>;

  constructor(passwd: string, group: string) {
    this.#users = parseIdFile(passwd);
    this.#groups = parseIdFile(group);
  }

  static async load(passwdPath = '/etc/passwd', groupPath = '/etc/group'): Promise<IdNames> {
    return new IdNames(await readIfPresent(passwdPath), await readIfPresent(groupPath));
  }

  /** "" when the uid has no entry, as restic records it. */
  user(uid: number): string {
    return this.#users.get(uid) ?? '';
  }

  group(gid: number): string {
    return this.#groups.get(gid) ?? '';
  }
}

let system: Promise<IdNames> | undefined;

/** The names of this machine, read once per process. */
export function systemIdNames(): Promise<IdNames> {
  system ??= IdNames.load();
  return system;
}
