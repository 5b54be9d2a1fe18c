// Extended attributes through the system calls (sys/xattrs.ts): read at backup without following symlinks, in the
// file system's order as restic records them; written at restore by restoreMetadata. No tool is spawned, and paths
// need not be UTF-8.
import type { ExtendedAttribute } from '../tree/node.ts';
import { getXattr, listXattrs } from '../sys/xattrs.ts';

/** Whether ferry can read extended attributes under `dir`: null when it can, otherwise the reason. */
export function xattrUnsupportedReason(dir: string): Promise<string | null> {
  try {
    listXattrs(Buffer.from(dir));
    return Promise.resolve(null);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTSUP' || code === 'EOPNOTSUPP')
      return Promise.resolve(`the file system at ${dir} does not support extended attributes`);
    return Promise.resolve(`cannot read extended attributes of ${dir}: ${(err as Error).message}`);
  }
}

export type Warn = (message: string) => void;

/** Reads the extended attributes of files for their tree nodes. */
export class XattrReader {
  readonly #warn: Warn;

  constructor(warn: Warn = () => undefined) {
    this.#warn = warn;
  }

  /** The attributes of `path` itself (a symlink is not followed); none when it has none or they cannot be read. */
  read(path: Buffer): Promise<ExtendedAttribute[]> {
    try {
      return Promise.resolve(listXattrs(path).map((name) => ({ name, value: getXattr(path, name) })));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTSUP' && code !== 'EOPNOTSUPP')
        this.#warn(`extended attributes of ${path.toString('utf8')} were not read: ${(err as Error).message}`);
      return Promise.resolve([]);
    }
  }
}
