// A node's "mode" is Go's os.FileMode, not a POSIX st_mode: the permission bits are the same, but the
// file type and the setuid / setgid / sticky flags live in the top bits.
import type { NodeType } from './node.ts';

export const goMode = {
  dir: 0x80000000,
  append: 1 << 30,
  exclusive: 1 << 29,
  temporary: 1 << 28,
  symlink: 1 << 27,
  device: 1 << 26,
  namedPipe: 1 << 25,
  socket: 1 << 24,
  setuid: 1 << 23,
  setgid: 1 << 22,
  charDevice: 1 << 21,
  sticky: 1 << 20,
  irregular: 1 << 19,
  perm: 0o777,
} as const;

/** Go's os.ModeType: every bit that names a file type. */
export const goModeType =
  (goMode.dir |
    goMode.symlink |
    goMode.namedPipe |
    goMode.socket |
    goMode.device |
    goMode.charDevice |
    goMode.irregular) >>>
  0;

/** The bits restic keeps from a stat (it drops append, exclusive and temporary). */
export const goModeStoredMask = (goModeType | goMode.perm | goMode.setuid | goMode.setgid | goMode.sticky) >>> 0;

const S_IFMT = 0o170000;
const posixType = {
  sock: 0o140000,
  lnk: 0o120000,
  reg: 0o100000,
  blk: 0o060000,
  dir: 0o040000,
  chr: 0o020000,
  fifo: 0o010000,
} as const;
const S_ISUID = 0o4000;
const S_ISGID = 0o2000;
const S_ISVTX = 0o1000;

/** os.FileMode from a Linux st_mode, as Go's os.Lstat computes it. */
export function goModeFromPosix(stMode: number): number {
  let mode = stMode & goMode.perm;
  switch (stMode & S_IFMT) {
    case posixType.blk:
      mode |= goMode.device;
      break;
    case posixType.chr:
      mode |= goMode.device | goMode.charDevice;
      break;
    case posixType.dir:
      mode |= goMode.dir;
      break;
    case posixType.fifo:
      mode |= goMode.namedPipe;
      break;
    case posixType.lnk:
      mode |= goMode.symlink;
      break;
    case posixType.sock:
      mode |= goMode.socket;
      break;
  }
  if (stMode & S_ISGID) mode |= goMode.setgid;
  if (stMode & S_ISUID) mode |= goMode.setuid;
  if (stMode & S_ISVTX) mode |= goMode.sticky;
  return mode >>> 0;
}

/** The st_mode bits chmod takes (permissions plus setuid / setgid / sticky), as Go's os.Chmod passes them. */
export function posixPermissionsFromGoMode(mode: number): number {
  let bits = mode & goMode.perm;
  if (mode & goMode.setuid) bits |= S_ISUID;
  if (mode & goMode.setgid) bits |= S_ISGID;
  if (mode & goMode.sticky) bits |= S_ISVTX;
  return bits;
}

/** A full st_mode (file type included) for an os.FileMode. */
export function posixFromGoMode(mode: number): number {
  const type = nodeTypeFromGoMode(mode);
  const typeBits: Record<NodeType, number> = {
    file: posixType.reg,
    dir: posixType.dir,
    symlink: posixType.lnk,
    dev: posixType.blk,
    chardev: posixType.chr,
    fifo: posixType.fifo,
    socket: posixType.sock,
    irregular: 0,
  };
  return typeBits[type] | posixPermissionsFromGoMode(mode);
}

/** The node type restic derives from an os.FileMode. */
export function nodeTypeFromGoMode(mode: number): NodeType {
  switch ((mode & goModeType) >>> 0) {
    case 0:
      return 'file';
    case goMode.dir:
      return 'dir';
    case goMode.symlink:
      return 'symlink';
    case goMode.device | goMode.charDevice:
      return 'chardev';
    case goMode.device:
      return 'dev';
    case goMode.namedPipe:
      return 'fifo';
    case goMode.socket:
      return 'socket';
    default:
      return 'irregular';
  }
}
