// A tree node from a file's lstat, with the same fields restic's backup records: Go's file mode, times
// with nanoseconds in the local zone, owner ids and names, inode and device, size and link count for
// files, the raw target of symlinks, st_rdev of devices, and extended attributes when asked for.
// Content and subtree are left for the archiver. Like restic's backup, atime is recorded as the mtime
// unless asked for (reading files moves atime, which would change every tree on every backup).
import type { BigIntStats } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { localTime } from '../tree/gotime.ts';
import { goModeFromPosix, goModeStoredMask, nodeTypeFromGoMode } from '../tree/mode.ts';
import { newNode } from '../tree/node.ts';
import type { TreeNode } from '../tree/node.ts';
import { systemIdNames } from './idnames.ts';
import type { IdNames } from './idnames.ts';
import type { XattrReader } from './xattr.ts';

export interface ReadOptions {
  /** uid/gid to name lookup; this machine's /etc/passwd and /etc/group by default */
  names?: IdNames;
  /** extended attributes are recorded only with a reader (see xattrUnsupportedReason) */
  xattrs?: XattrReader;
  /** record the real atime, restic's --with-atime */
  withAtime?: boolean;
  /**
   * Keep st_dev only for hard-linked files, restic's `device-id-for-hardlinks` feature: a volume mounted
   * afresh from each CSI snapshot gets a new st_dev every time, which would otherwise change every tree.
   */
  deviceIdOnlyForHardlinks?: boolean;
}

/** `st` must come from lstat(path, { bigint: true }); `name` is the entry's raw name. */
export async function nodeFromStat(
  name: Uint8Array,
  st: BigIntStats,
  path: Buffer,
  opts: ReadOptions = {},
): Promise<TreeNode> {
  const mode = goModeFromPosix(Number(st.mode)) & goModeStoredMask;
  const type = nodeTypeFromGoMode(mode);
  const names = opts.names ?? (await systemIdNames());
  const uid = Number(st.uid);
  const gid = Number(st.gid);
  const mtime = localTime(st.mtimeNs);
  const node = newNode(name, type, {
    mode: mode >>> 0,
    mtime,
    atime: opts.withAtime ? localTime(st.atimeNs) : mtime,
    ctime: localTime(st.ctimeNs),
    uid,
    gid,
    user: names.user(uid),
    group: names.group(gid),
    inode: st.ino,
    deviceId: st.dev,
  });
  if (type !== 'dir' && type !== 'fifo' && type !== 'socket') node.links = st.nlink;
  if (opts.deviceIdOnlyForHardlinks && (type === 'dir' || node.links === 1n)) node.deviceId = 0n;
  if (type === 'file') node.size = st.size;
  if (type === 'dev' || type === 'chardev') node.device = st.rdev;
  if (type === 'symlink') {
    const target = await readlink(path, { encoding: 'buffer' });
    node.linkTarget = new Uint8Array(target.buffer, target.byteOffset, target.byteLength);
  }
  if (opts.xattrs) node.extendedAttributes = await opts.xattrs.read(path);
  return node;
}
