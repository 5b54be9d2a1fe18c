// Local filesystem backend with restic's on-disk behaviour, so restic can read, prune and delete what ferry writes:
// the same folders, a temporary file beside the target that is synced and renamed into place, files made
// read-only after writing, and permissions that follow the config file (group access if config is group-readable).

import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { objectPath, PermanentError, typeFolders } from './backend.ts';
import type { Backend, FileInfo, FileType, Handle } from './backend.ts';
import { checkHandle, isNotExistError, NotExistError, rangeEnd } from './errors.ts';

interface Modes {
  dir: number;
  file: number;
}

const privateModes: Modes = { dir: 0o700, file: 0o600 };
const groupModes: Modes = { dir: 0o770, file: 0o660 };
const writeBits = 0o222;
const tempMarker = '-tmp-';
/** errno codes that retrying will not fix */
const permanentCodes = new Set(['ENOSPC', 'EACCES', 'EPERM', 'EROFS', 'EDQUOT', 'ENOTDIR', 'EISDIR']);

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

export class FsBackend implements Backend {
  readonly location: string;
  #modes: Promise<Modes> | undefined;

  constructor(path: string) {
    this.location = resolve(path);
  }

  #path(h: Handle): string {
    checkHandle(h);
    return join(this.location, objectPath(h));
  }

  /** Derived once, like restic: group permissions when the existing config file is group-readable. */
  #getModes(): Promise<Modes> {
    this.#modes ??= stat(join(this.location, 'config')).then(
      (s) => ((s.mode & 0o040) !== 0 ? groupModes : privateModes),
      () => privateModes,
    );
    return this.#modes;
  }

  #wrap(err: unknown, h: Handle, action: string): unknown {
    if (errno(err) === 'ENOENT') return new NotExistError(this.location, h, { cause: err });
    if (permanentCodes.has(errno(err) ?? '')) {
      return new PermanentError(`Cannot ${action} ${objectPath(h)} in ${this.location}: ${(err as Error).message}.`, {
        cause: err,
      });
    }
    return err;
  }

  async create(): Promise<void> {
    const { dir } = await this.#getModes();
    const folders = Object.values(typeFolders).map((f) => join(this.location, f));
    for (let i = 0; i < 256; i++) folders.push(join(this.location, 'data', i.toString(16).padStart(2, '0')));
    for (const folder of folders) await mkdir(folder, { recursive: true, mode: dir });
  }

  async save(h: Handle, data: Uint8Array, signal?: AbortSignal): Promise<void> {
    const path = this.#path(h);
    const modes = await this.#getModes();
    const temp = `${path}${tempMarker}${randomBytes(6).toString('hex')}`;
    let file: FileHandle | undefined;
    try {
      signal?.throwIfAborted();
      file = await this.#openTemp(temp, modes);
      await file.writeFile(data, { signal });
      await file.sync();
      await file.close();
      file = undefined;
      // the last moment an abort can still leave nothing behind
      signal?.throwIfAborted();
      await rename(temp, path);
    } catch (err) {
      await file?.close().catch(() => {});
      await unlink(temp).catch(() => {});
      throw errno(err) === 'ENOENT' ? err : this.#wrap(err, h, 'save');
    }
    await syncDir(dirname(path));
    // read-only like restic, so accidental writes fail; some filesystems refuse chmod, which is harmless
    await chmod(path, modes.file & ~writeBits).catch((err: unknown) => {
      if (errno(err) !== 'EPERM') throw err;
    });
  }

  async #openTemp(temp: string, modes: Modes): Promise<FileHandle> {
    try {
      return await open(temp, 'wx', modes.file);
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
      // a layout made by another tool may lack a data/xx folder
      await mkdir(dirname(temp), { recursive: true, mode: modes.dir });
      return await open(temp, 'wx', modes.file);
    }
  }

  async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    const path = this.#path(h);
    signal?.throwIfAborted();
    if (h.type !== 'pack') return this.#loadSmall(h, path, offset, length);
    let file: FileHandle;
    try {
      file = await open(path, 'r');
    } catch (err) {
      throw this.#wrap(err, h, 'read');
    }
    try {
      const { size } = await file.stat();
      const end = rangeEnd(this.location, h, size, offset, length);
      const out = Buffer.allocUnsafe(end - offset);
      let done = 0;
      while (done < out.length) {
        signal?.throwIfAborted();
        const { bytesRead } = await file.read(out, done, out.length - done, offset + done);
        if (bytesRead === 0) throw new Error(`${objectPath(h)} in ${this.location} shrank while being read.`);
        done += bytesRead;
      }
      return out;
    } finally {
      await file.close();
    }
  }

  /**
   * Config, keys, locks, snapshots and index files are small and read whole, in one blocking call: four thread-pool
   * round trips each (open, stat, read, close) cost more, and until its modules are loaded the CLI gives the event
   * loop no turn, so the key's scrypt could not start before the command's modules were in.
   */
  #loadSmall(h: Handle, path: string, offset: number, length: number): Uint8Array {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      throw this.#wrap(err, h, 'read');
    }
    return bytes.subarray(offset, rangeEnd(this.location, h, bytes.length, offset, length));
  }

  async stat(h: Handle): Promise<FileInfo> {
    try {
      const s = await stat(this.#path(h));
      return { name: h.name, size: s.size };
    } catch (err) {
      throw this.#wrap(err, h, 'stat');
    }
  }

  async remove(h: Handle): Promise<void> {
    try {
      await unlink(this.#path(h));
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw this.#wrap(err, h, 'remove');
    }
  }

  /** Listed with blocking calls, like the small files: a stat per entry through the thread pool cost a turn each. */
  async *list(type: FileType, signal?: AbortSignal): AsyncIterable<FileInfo> {
    if (type === 'config') return;
    const base = join(this.location, typeFolders[type]);
    const folders = type === 'pack' ? names(base).map((d) => join(base, d)) : [base];
    for (const folder of folders) {
      for (const name of names(folder)) {
        signal?.throwIfAborted();
        // temporary files of saves in flight (or of a crashed process) are not part of the repository
        if (name.includes(tempMarker)) continue;
        const info = fileInfo(join(folder, name));
        if (info) yield { name, size: info.size };
      }
    }
  }

  isNotExist(err: unknown): boolean {
    return isNotExistError(err);
  }

  async close(): Promise<void> {}
}

/** Folder entries, or none when the folder does not exist (or is not a folder). */
function names(folder: string): string[] {
  try {
    return readdirSync(folder).sort();
  } catch (err) {
    if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return [];
    throw err;
  }
}

/** Size of a regular file; undefined when it vanished since the folder was read, or is not a file. */
function fileInfo(path: string): { size: number } | undefined {
  try {
    const s = statSync(path);
    return s.isFile() ? { size: s.size } : undefined;
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** Makes a rename durable; filesystems without directory fsync are accepted as they are. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync().catch((err: unknown) => {
      if (errno(err) !== 'EINVAL' && errno(err) !== 'ENOTSUP') throw err;
    });
  } finally {
    await handle.close();
  }
}
