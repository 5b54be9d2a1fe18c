// Restore of a snapshot (or a path inside it) into a directory: directories first, the contents of many files at
// once through a pack reader (each file asks for all its blobs at once, so one read of a pack serves every file in
// flight that needs it), hard links recreated from inode numbers, and directory metadata applied last (writing into
// a directory changes its mtime). Every blob is verified against its id before it is written.
//
// Every entry is made below the target folder's descriptor, by a path relative to it that the kernel resolves
// without following symlinks or leaving the target (target-entries.ts): whatever the repository or the target
// volume holds, the restore changes nothing outside the target.
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { ID } from '../ids/id.ts';
import type { Repository } from '../repository/repository.ts';
import { walkTrees } from '../repository/walk.ts';
import { findNode } from '../tree/tree.ts';
import { displayName, type TreeNode } from '../tree/node.ts';
import { restoreMetadata, restoreMetadataAt } from '../fsmeta/restore.ts';
import { S_IFBLK, S_IFCHR, S_IFIFO } from '../sys/entries.ts';
import {
  childPath,
  createFile,
  inParent,
  makeFolder,
  makeHardLink,
  makeNodeEntry,
  makeSymlinkEntry,
  removeFile,
} from './target-entries.ts';
import { DescriptorFile } from './descriptor-file.ts';
import { newProgress, throttled, type Progress, type ProgressFn } from '../concurrency/progress.ts';
import {
  isZeroBlob,
  placeBlobs,
  writeFileContent,
  type BlobPlacement,
  type ContentSource,
  type WriteTarget,
} from './file-writer.ts';
import { SmallFileWriter } from './small-file-writer.ts';
import { PackReader } from './pack-reader.ts';
import { openHere, openSharing, type OpenBlobs } from './open-blobs.ts';
import { ByteBudget } from './byte-budget.ts';
import { FileSlots } from './file-slots.ts';
import { Semaphore } from '../concurrency/semaphore.ts';
import { capHeapGrowth, youngCap } from '../memory/collect.ts';
import { defaultBudget, filesInFlight, packRead, readAhead, smallFile, writesInFlight } from './tuning.ts';

export interface RestoreOptions {
  target: string;
  /** a path inside the snapshot, e.g. "/data/app"; its contents (or the file itself) are restored into target */
  subpath?: string;
  /** ranged pack reads in flight */
  loads?: number;
  /** plaintext bytes of the blobs being read or handed over and not yet written */
  budget?: number;
  /**
   * What decrypts, decompresses and verifies the blobs of a pack read. By default this thread, which costs less CPU
   * and memory than worker threads do on restores (each worker floats its own garbage buffers), or the small-file
   * thread for a read that finds it free, moved to it whole (no copy); the restore operation passes worker threads'
   * when asked to.
   */
  open?: OpenBlobs;
  signal?: AbortSignal;
  onProgress?: ProgressFn;
  /** put recorded extended attributes back */
  xattrs?: boolean;
  /**
   * the target takes the restored folder's own owner, mode and times too (a volume's root becomes the backed-up
   * folder), set once everything below it is written
   */
  rootMetadata?: boolean;
}

export class RestoreError extends Error {}

/** the type bits mknodat takes for each special file restored */
const nodeTypeBits: Partial<Record<TreeNode['type'], number>> = { fifo: S_IFIFO, dev: S_IFBLK, chardev: S_IFCHR };

export async function restoreTree(repo: Repository, root: ID, opts: RestoreOptions): Promise<Progress> {
  const r = new Restorer(repo, opts);
  return r.run(root);
}

class Restorer {
  readonly #repo: Repository;
  readonly #opts: RestoreOptions;
  readonly #source: ContentSource;
  readonly #reader: PackReader;
  readonly #files: FileSlots;
  readonly #progress = newProgress();
  readonly #tick: { tick(): void; flush(): void };
  /** each hard-linked inode's first path, settling once that file is written */
  readonly #links = new Map<string, Promise<Buffer>>();
  readonly #meta: { xattrs?: boolean };
  readonly #small: SmallFileWriter;
  /** the descriptor every restored path is relative to: the target folder (or the folder of a single entry) */
  #root = -1;
  /** entries being restored; the root descriptor stays open until none is, so none can reach a reused number */
  #busy = 0;
  #idle: PromiseWithResolvers<void> | undefined;

  constructor(repo: Repository, opts: RestoreOptions) {
    // the walk keeps tree nodes and files in flight alive across scavenges, which grows the young generation to its
    // maximum (more peak memory) for no gain in speed, and V8 would let the old generation grow up to 4x
    capHeapGrowth(youngCap.restore);
    this.#repo = repo;
    this.#opts = opts;
    this.#small = new SmallFileWriter(repo.key);
    // a read that finds the small-file thread free is opened there (open-blobs.ts)
    const reader = new PackReader(repo.backend, opts.open ?? openSharing(openHere(repo), this.#small), {
      reads: opts.loads,
      signal: opts.signal,
      maxRead: packRead,
      cache: readAhead,
      span: (pack) => repo.index.span(pack, 'data'),
      budget: new ByteBudget(opts.budget ?? defaultBudget),
    });
    this.#reader = reader;
    this.#source = {
      read: (loc) => reader.read(loc),
      done: (loc, data) => reader.done(loc, data),
      writes: new Semaphore(writesInFlight),
    };
    this.#files = new FileSlots(filesInFlight);
    this.#tick = throttled(opts.onProgress, this.#progress);
    this.#meta = { xattrs: opts.xattrs === true };
  }

  async run(root: ID): Promise<Progress> {
    let restored: { progress: Progress; folder?: TreeNode };
    try {
      restored = await this.#run(root);
    } finally {
      await this.#small.close();
      await this.#settled();
      if (this.#root >= 0) closeSync(this.#root);
    }
    // last, once the small-file thread has written everything: writing into the target changes its times
    if (this.#opts.rootMetadata && restored.folder) restoreMetadata(this.#opts.target, restored.folder);
    return restored.progress;
  }

  async #run(root: ID): Promise<{ progress: Progress; folder?: TreeNode }> {
    const start = await this.#resolve(root, this.#opts.subpath ?? '/');
    const target = Buffer.from(this.#opts.target);
    if ('tree' in start) {
      // every tree below is loaded and held to restic's invariants before anything is written: a bad tree deep down
      // fails the restore with the target untouched rather than half restored
      await walkTrees(this.#repo, [start.tree], {}, this.#opts.signal);
      await mkdir(target, { recursive: true });
      // the target itself is the caller's choice, followed if it is a symlink; nothing below it is
      this.#root = openSync(target, constants.O_RDONLY | constants.O_DIRECTORY);
      this.#small.start(this.#root);
      await this.#restoreDir(start.tree, Buffer.alloc(0), Promise.resolve());
    } else if (start.node.type === 'file') {
      // one file (a stream backup of a block volume): the target is the file, or the device to fill
      const st = await stat(target).catch(() => undefined);
      if (st?.isDirectory())
        throw new RestoreError(`target ${this.#opts.target} is a directory; name the file or device to write`);
      // the small-file thread helps open the blobs (openSharing), unless the caller chose how they are opened
      if (!this.#opts.open) this.#small.startForReads();
      await this.#writeFile(start.node, target, { existing: st?.isBlockDevice() === true });
      this.#progress.filesDone++;
    } else {
      this.#root = openSync(dirname(this.#opts.target), constants.O_RDONLY | constants.O_DIRECTORY);
      this.#small.start(this.#root);
      await this.#hold(this.#restoreNode(start.node, Buffer.from(basename(this.#opts.target)), Promise.resolve()));
    }
    this.#progress.totalsFinal = true;
    this.#tick.flush();
    return { progress: this.#progress, folder: 'tree' in start ? start.folder : undefined };
  }

  /** The tree restored (with its folder's node, which the snapshot's root has none of), or the single entry. */
  async #resolve(root: ID, subpath: string): Promise<{ tree: ID; folder?: TreeNode } | { node: TreeNode }> {
    let tree = root;
    let folder: TreeNode | undefined;
    const parts = subpath.split('/').filter((p) => p.length > 0);
    for (let i = 0; i < parts.length; i++) {
      const node = findNode(await this.#loadTree(tree), Buffer.from(parts[i]));
      if (!node) throw new RestoreError(`path "${subpath}" is not in the snapshot (no "${parts[i]}")`);
      if (node.type !== 'dir') {
        if (i === parts.length - 1) return { node };
        throw new RestoreError(`path "${subpath}" is not in the snapshot ("${parts[i]}" is not a directory)`);
      }
      tree = node.subtree!;
      folder = node;
    }
    return { tree, folder };
  }

  async #loadTree(id: ID): Promise<TreeNode[]> {
    return this.#repo.loadTree(id, this.#opts.signal);
  }

  /** Counts `p` among the entries in flight until it settles. */
  #hold(p: Promise<void>): Promise<void> {
    this.#busy++;
    const settle = (): void => {
      if (--this.#busy === 0) this.#idle?.resolve();
    };
    p.then(settle, settle);
    return p;
  }

  async #settled(): Promise<void> {
    while (this.#busy > 0) {
      this.#idle = Promise.withResolvers<void>();
      await this.#idle.promise;
    }
  }

  /** Restores a directory's entries into `dir` (once `ready`: it exists); settles once every file below is written. */
  async #restoreDir(tree: ID, dir: Buffer, ready: Promise<void>): Promise<void> {
    await (
      await this.#scheduleDir(tree, dir, ready)
    ).done;
  }

  /**
   * Creates a directory's entries and starts their contents. Settles once everything below is scheduled (the walk
   * goes depth first and waits for file slots, so memory follows the work in flight, not the tree); `done` settles
   * once everything below is written. The walk does not wait for folders to be made (`ready` settles once `dir`
   * exists): it runs ahead to the limit of file slots in one go, so the blobs of many files reach the pack reader
   * together and share reads, rather than a folder's worth at a time.
   */
  async #scheduleDir(tree: ID, dir: Buffer, ready: Promise<void>): Promise<{ done: Promise<void> }> {
    const nodes = await this.#loadTree(tree);
    const pending: Promise<void>[] = [];
    const track = (p: Promise<void>): void => {
      p.catch(() => undefined); // failures surface through Promise.all below
      pending.push(this.#hold(p));
    };
    for (const node of nodes) {
      this.#opts.signal?.throwIfAborted();
      const path = childPath(dir, checkedName(node.name));
      if (node.type === 'dir') {
        // an entry already there in its place is replaced, never followed (see target-entries.ts)
        const made = ready.then(() => makeFolder(this.#root, path));
        made.catch(() => undefined); // surfaces through the entry tracked below
        const below = await this.#scheduleDir(node.subtree!, path, made);
        // a directory's times are set last: writing its entries changes them
        track(made.then(() => below.done).then(() => this.#dirMetadata(path, node)));
        continue;
      }
      await this.#files.acquire();
      track(this.#restoreNode(node, path, ready).finally(() => this.#files.release()));
    }
    const done = Promise.all(pending).then(() => undefined);
    done.catch(() => undefined);
    return { done };
  }

  /** A folder's metadata goes through the small-file thread too, unless it has extended attributes to restore. */
  #dirMetadata(path: Buffer, node: TreeNode): Promise<void> {
    if (this.#meta.xattrs && node.extendedAttributes.length > 0)
      return Promise.resolve().then(() => this.#metadata(path, node));
    return this.#small.writeMetadata(path, node);
  }

  /** Restores the metadata of the entry `path`, by name in its folder, following no symlink. */
  #metadata(path: Buffer, node: TreeNode): void {
    inParent(this.#root, path, (dirfd, name) => restoreMetadataAt(dirfd, name, node, path.toString(), this.#meta));
  }

  /** Restores one entry at `path`, once `ready` (its folder exists). */
  async #restoreNode(node: TreeNode, path: Buffer, ready: Promise<void>): Promise<void> {
    this.#progress.currentPath = path.toString();
    // a file's blobs are asked for at once; everything else needs the folder first
    if (node.type !== 'file') await ready;
    switch (node.type) {
      case 'file':
        if (await this.#restoreFile(node, path, ready)) {
          this.#progress.filesDone++;
          this.#tick.tick();
          return;
        }
        break;
      case 'symlink':
        makeSymlinkEntry(this.#root, path, node.linkTarget);
        break;
      case 'dir':
        makeFolder(this.#root, path);
        if (node.subtree) await this.#restoreDir(node.subtree, path, ready);
        break;
      case 'socket':
        // a socket belongs to the process that listened on it; like restic, nothing is recreated
        return;
      default: {
        const type = nodeTypeBits[node.type];
        if (type === undefined)
          throw new RestoreError(
            `cannot restore ${path.toString()}: it is a ${node.type}, not a file, folder, symlink, fifo, device or socket`,
          );
        // made 0600 as restic does; its recorded mode follows with the rest of its metadata
        makeNodeEntry(this.#root, path, type | 0o600, node.device);
      }
    }
    this.#metadata(path, node);
    // files only, as a backup counts them (restic's total_files_processed): folders and links are not files
    if (node.type === 'file') this.#progress.filesDone++;
    this.#tick.tick();
  }

  /** Writes a file's content into a new file `path` below the root. */
  #writeNewFile(node: TreeNode, path: Buffer, ready: Promise<void>): Promise<void> {
    const root = this.#root;
    return this.#writeFile(node, path, {
      ready,
      create: () => new DescriptorFile(createFile(root, path)),
      discard: () => removeFile(root, path),
    });
  }

  #writeFile(node: TreeNode, path: Buffer, target: WriteTarget = {}): Promise<void> {
    this.#progress.filesTotal++;
    this.#progress.bytesTotal += Number(node.size);
    return writeFileContent(
      this.#repo,
      path,
      node.content ?? [],
      this.#source,
      (n) => {
        this.#progress.bytesDone += n;
        this.#tick.tick();
      },
      this.#opts.signal,
      target,
    );
  }

  /** Writes a file (or links it to its inode's first path); true when its metadata is written too. */
  async #restoreFile(node: TreeNode, path: Buffer, ready: Promise<void>): Promise<boolean> {
    const key = node.links > 1n ? `${node.deviceId}:${node.inode}` : '';
    const first = key ? this.#links.get(key) : undefined;
    if (first) {
      const from = await first;
      await ready;
      makeHardLink(this.#root, from, path);
      return false;
    }
    const small = this.#smallBlob(node);
    const written = (
      small === undefined ? this.#writeNewFile(node, path, ready) : this.#writeSmall(node, path, ready, small)
    ).then(() => path);
    if (key) this.#links.set(key, written);
    await written;
    return small !== undefined;
  }

  /**
   * The one blob of a small file the small-file thread can write, metadata and all ('none' for an empty file), or
   * undefined: larger files are written a blob at a time, and extended attributes are set on the main thread.
   */
  #smallBlob(node: TreeNode): BlobPlacement | 'none' | undefined {
    const content = node.content ?? [];
    if (content.length > 1 || node.size > smallFile || (this.#meta.xattrs && node.extendedAttributes.length > 0))
      return undefined;
    if (content.length === 0) return 'none';
    const [blob] = placeBlobs(this.#repo, content).blobs;
    return isZeroBlob(blob) ? undefined : blob;
  }

  async #writeSmall(node: TreeNode, path: Buffer, ready: Promise<void>, blob: BlobPlacement | 'none'): Promise<void> {
    this.#progress.filesTotal++;
    this.#progress.bytesTotal += Number(node.size);
    if (blob === 'none') {
      await ready;
      await this.#small.write(path, new Uint8Array(0), Number(node.size), node);
      return;
    }
    this.#opts.signal?.throwIfAborted();
    // opened on the small-file thread, which has time to spare where this one has none
    const sealed = await this.#reader.readSealed(blob.loc);
    try {
      await ready;
      await this.#small.writeSealed(path, sealed, blob.loc, Number(node.size), node);
    } finally {
      this.#reader.done(blob.loc);
    }
    this.#progress.bytesDone += blob.length;
    this.#tick.tick();
  }
}

/** A name from a repository must not climb out of the target directory. */
function checkedName(name: Uint8Array): Uint8Array {
  const s = Buffer.from(name);
  if (
    s.length === 0 ||
    s.includes(0x2f) ||
    s.includes(0) ||
    s.equals(Buffer.from('.')) ||
    s.equals(Buffer.from('..'))
  ) {
    throw new RestoreError(`refusing to restore an entry named "${displayName(name)}": it is not a plain file name`);
  }
  return name;
}
