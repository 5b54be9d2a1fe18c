// Backup of directory trees into a repository: walks the tree (sorted, byte-wise names), stores file contents
// through the worker pool, writes one tree blob per directory once its children are stored, and finally the
// snapshot. The walk never waits for file contents, so many files are in flight even in narrow, deep trees,
// while a semaphore bounds how many.
import { stat } from 'node:fs/promises';
import { lstatSync, type BigIntStats } from 'node:fs';
import { cpus } from 'node:os';
import { hashID, type ID } from '../ids/id.ts';
import { Semaphore } from '../concurrency/semaphore.ts';
import { prepareBlob } from '../pack/prepare.ts';
import { formatPolynomial } from '../chunker/polynomial.ts';
import { minChunkSize } from '../chunker/limits.ts';
import type { Repository } from '../repository/repository.ts';
import type { PackWriter } from '../repository/pack-writer.ts';
import { encodeTree, findNode } from '../tree/tree.ts';
import { InvalidTreeError } from '../tree/validate.ts';
import { sameNodes } from '../tree/same.ts';
import { compareNames, newNode, type TreeNode } from '../tree/node.ts';
import { localTime } from '../tree/gotime.ts';
import { nodeFromStat, type ReadOptions } from '../fsmeta/read.ts';
import { lstatEntries } from '../fsmeta/lstat-entries.ts';
import { listNames } from '../fsmeta/list-names.ts';
import { XattrReader, xattrUnsupportedReason } from '../fsmeta/xattr.ts';
import { BackupPool } from './pool.ts';
import { blockReadOf, planBlocks, smallChangedRead, type BlockChanges, type BlockRead } from '../blocks/plan.ts';
import { capHeapGrowth, youngCap } from '../memory/collect.ts';
import { SmallBatches } from './small-batches.ts';
import type { SmallFileRead } from './worker-protocol.ts';
import { newProgress, throttled, type Progress, type ProgressFn } from '../concurrency/progress.ts';
import { scanTotals } from './scanner.ts';
import type { Counters } from './summary.ts';
import { newCounters } from './summary.ts';

export interface ArchiveOptions {
  /** snapshot whose unchanged files (same size and mtime) are reused without reading */
  parentTree?: ID;
  workers?: number;
  compression?: boolean;
  signal?: AbortSignal;
  onProgress?: ProgressFn;
  /** files at most this big are stored whole as one blob, in batches; bigger ones are chunked one by one */
  smallFile?: number;
  /**
   * Record extended attributes. Off by default, as in restic 0.14: two more system calls per file (llistxattr, and
   * lgetxattr per attribute), and trees that then differ from those of a backup without them.
   */
  xattrs?: boolean;
  /** what the backup skipped and went on without (extended attributes it could not read); Node's warnings by default */
  onWarning?: (message: string) => void;
}

export interface ArchiveResult {
  tree: ID;
  counters: Counters;
  progress: Progress;
  /** for a device read with changed-block tracking at hand: how it was read and how much */
  blockRead?: BlockRead;
}

const pathSep = Buffer.from('/');
/** entries of a folder stat'ed together (see lstatEntries) */
const statSlice = 256;

function join(dir: Buffer, name: Uint8Array): Buffer {
  return dir.length === 1 && dir[0] === 0x2f ? Buffer.concat([dir, name]) : Buffer.concat([dir, pathSep, name]);
}

export class Archiver {
  readonly #repo: Repository;
  readonly #writer: PackWriter;
  readonly #pool: BackupPool;
  readonly #opts: ArchiveOptions;
  /** big files being read by workers (each holds a 9 MiB read buffer there) */
  readonly #fileSlots: Semaphore;
  readonly #small: SmallBatches;
  readonly #progress = newProgress();
  readonly #tick: { tick(): void; flush(): void };
  readonly #counters = newCounters();
  readonly #compression: boolean;
  readonly #smallFile: number;
  readonly #read: ReadOptions = {};

  constructor(repo: Repository, writer: PackWriter, opts: ArchiveOptions = {}) {
    this.#repo = repo;
    this.#writer = writer;
    this.#opts = opts;
    this.#compression = opts.compression ?? repo.config.version >= 2;
    this.#smallFile = Math.min(opts.smallFile ?? 64 * 1024, minChunkSize);
    const workers = opts.workers ?? Math.max(1, cpus().length);
    this.#pool = new BackupPool(
      { key: repo.key, polynomial: formatPolynomial(repo.config.chunkerPolynomial), compression: this.#compression },
      workers,
      writer,
    );
    // two big files per worker: while one waits (for its next read, or for the main thread's answer about a chunk)
    // the other's chunks keep the thread busy; with one each, the workers sat idle for part of every large file
    this.#fileSlots = new Semaphore(2 * workers);
    // a batch is a few milliseconds of a worker's time; two per worker keep each busy while the other waits
    this.#small = new SmallBatches(
      (paths) => this.#pool.backupSmallFiles(paths, opts.signal),
      { files: 64, bytes: 1 << 20, inFlight: 2 * workers },
      (n) => {
        this.#progress.bytesAdded += n;
      },
    );
    this.#tick = throttled(opts.onProgress, this.#progress);
    capHeapGrowth(youngCap.backup);
  }

  /** Archives absolute `paths` under a root tree that mirrors their parent directories, as restic does. */
  async archive(paths: string[]): Promise<ArchiveResult> {
    if (this.#opts.xattrs) {
      const reason = await xattrUnsupportedReason(paths[0]);
      if (reason) throw new Error(`cannot record extended attributes: ${reason}`);
      this.#read.xattrs = new XattrReader(this.#opts.onWarning ?? ((m) => process.emitWarning(m)));
    }
    // totals only matter to someone watching progress; the scan costs a second lstat per file
    const scan = this.#opts.onProgress ? scanTotals(paths, this.#progress, this.#opts.signal) : Promise.resolve();
    try {
      const parentRoot = this.#opts.parentTree ? await this.#loadTree(this.#opts.parentTree) : undefined;
      const tree = await this.#saveVirtual(buildVirtualTree(paths), Buffer.from('/'), parentRoot);
      await scan.catch(() => undefined);
      this.#tick.flush();
      return { tree, counters: this.#counters, progress: this.#progress };
    } finally {
      await this.#pool.close();
    }
  }

  /**
   * Archives one file or device as a single file node named `name` at the snapshot root (restic's --stdin shape),
   * for block-mode volumes and images. `size`, when known (a device reports 0), feeds the progress totals.
   */
  async archiveStream(
    source: string,
    name: string,
    size = 0,
    blocks?: { changes: BlockChanges; parentID?: ID },
  ): Promise<ArchiveResult> {
    try {
      const parentTree = blocks?.parentID && this.#opts.parentTree;
      const planned =
        blocks &&
        planBlocks(this.#repo, size, blocks.changes, {
          id: blocks.parentID,
          nodes: parentTree ? await this.#loadTree(parentTree) : undefined,
          name: Buffer.from(name),
        });
      if (planned?.plan?.changed && smallChangedRead(planned.plan.changed)) await this.#pool.runHere();
      this.#progress.filesTotal = 1;
      this.#progress.bytesTotal = size;
      this.#progress.totalsFinal = true;
      this.#progress.currentPath = source;
      let streamed = 0;
      const r = await this.#pool.backupFile(
        Buffer.from(source),
        (n) => {
          streamed += n;
          this.#progress.bytesDone += n;
          this.#tick.tick();
        },
        this.#opts.signal,
        planned?.plan,
      );
      const now = localTime(BigInt(Date.now()) * 1_000_000n);
      const node = newNode(Buffer.from(name), 'file', {
        mode: 0o600,
        mtime: now,
        atime: now,
        ctime: now,
        uid: process.getuid?.() ?? 0,
        gid: process.getgid?.() ?? 0,
        size: BigInt(r.size),
        content: r.content,
      });
      this.#counters.filesNew++;
      this.#doneFile(r.size, streamed);
      const tree = await this.#saveTree([node]);
      this.#tick.flush();
      const blockRead = planned && blockReadOf(planned, r.size, r.bytesRead);
      return { tree, counters: this.#counters, progress: this.#progress, blockRead };
    } finally {
      await this.#pool.close();
    }
  }

  async #saveVirtual(v: VirtualDir, path: Buffer, parent: TreeNode[] | undefined): Promise<ID> {
    const nodes: Promise<TreeNode>[] = [];
    for (const child of [...v.children.values()].sort((a, b) => compareNames(a.name, b.name))) {
      const full = join(path, child.name);
      const previous = parent && findNode(parent, child.name);
      if (child.leaf) {
        nodes.push((await this.#schedule(full, child.name, lstatSync(full, { bigint: true }), previous)).done);
        continue;
      }
      // a folder above a backed-up path is followed when it is a symlink, as restic does: the snapshot then holds
      // the folder the files are really in, and a restore brings them back (a symlink node has no children)
      const st = await stat(full, { bigint: true });
      if (!st.isDirectory()) throw new Error(`cannot back up below ${full.toString()}: it is not a directory`);
      const node = await nodeFromStat(child.name, st, full, this.#read);
      node.subtree = await this.#saveVirtual(child, full, (await this.#previousTree(previous))?.nodes);
      nodes.push(Promise.resolve(node));
    }
    // the walk below here is over; its last small files must leave before anything waits for them
    await this.#small.flush();
    return this.#saveTree(await Promise.all(nodes));
  }

  /**
   * Schedules one entry. Settles once it is admitted (a directory listed, a file given a slot), so the walk is
   * throttled by the work in flight; `done` settles when its data is stored.
   */
  async #schedule(
    full: Buffer,
    name: Uint8Array,
    st: BigIntStats,
    previous: TreeNode | undefined,
  ): Promise<Pending<TreeNode>> {
    this.#opts.signal?.throwIfAborted();
    const node = await nodeFromStat(name, st, full, this.#read);
    if (node.type === 'dir') {
      const tree = await this.#walkDir(full, await this.#previousTree(previous));
      return pending(
        tree.done.then((subtree) => {
          node.subtree = subtree;
          if (previous?.subtree === subtree) this.#counters.dirsUnmodified++;
          else if (previous) this.#counters.dirsChanged++;
          else this.#counters.dirsNew++;
          return node;
        }),
      );
    }
    if (node.type !== 'file') return pending(Promise.resolve(node));
    if (
      previous &&
      unchanged(previous, node) &&
      previous.content?.every((id: string) => this.#writer.has('data', id))
    ) {
      node.content = previous.content;
      this.#counters.filesUnmodified++;
      this.#doneFile(Number(node.size));
      return pending(Promise.resolve(node));
    }
    if (node.size <= BigInt(this.#smallFile)) {
      this.#progress.currentPath = full.toString();
      const stored = await this.#small.add(full, Number(node.size));
      return pending(stored.done.then((f) => this.#storedSmall(node, previous, f)));
    }
    await this.#fileSlots.acquire();
    return pending(this.#storeFile(full, node, previous).finally(() => this.#fileSlots.release()));
  }

  async #walkDir(dir: Buffer, parent: PreviousTree | undefined): Promise<Pending<ID>> {
    // lstat and readdir block: on a mounted volume each takes microseconds, where a round trip through libuv's
    // thread pool per entry left the main thread idle for most of an incremental backup
    const names = listNames(dir);
    const nodes: Promise<TreeNode>[] = [];
    let stats: (BigIntStats | undefined)[] = [];
    for (let i = 0; i < names.length; i++) {
      // a slice at a time, so a folder of a million files never holds a million stats
      if (i % statSlice === 0) stats = lstatEntries(dir, names.slice(i, i + statSlice));
      const full = join(dir, names[i]);
      const st = stats[i % statSlice] ?? lstatSync(full, { bigint: true });
      nodes.push((await this.#schedule(full, names[i], st, parent && findNode(parent.nodes, names[i]))).done);
    }
    // a directory whose every entry is as the parent snapshot recorded it is the parent's tree: no encoding, no hashing
    return pending(
      Promise.all(nodes).then((n) => (parent && sameNodes(parent.nodes, n) ? parent.id : this.#saveTree(n))),
    );
  }

  async #storeFile(full: Buffer, node: TreeNode, previous: TreeNode | undefined): Promise<TreeNode> {
    this.#progress.currentPath = full.toString();
    let streamed = 0;
    const r = await this.#pool.backupFile(
      full,
      (n) => {
        streamed += n;
        this.#progress.bytesDone += n;
        this.#tick.tick();
      },
      this.#opts.signal,
    );
    node.content = r.content;
    // the size actually read: a file that grew or shrank since lstat is recorded as it was read
    node.size = BigInt(r.size);
    this.#countStored(node, previous, streamed);
    return node;
  }

  #storedSmall(node: TreeNode, previous: TreeNode | undefined, f: SmallFileRead): TreeNode {
    node.content = f.size === 0 ? [] : [f.id];
    node.size = BigInt(f.size);
    this.#countStored(node, previous, 0);
    return node;
  }

  #countStored(node: TreeNode, previous: TreeNode | undefined, streamed: number): void {
    if (previous) this.#counters.filesChanged++;
    else this.#counters.filesNew++;
    this.#doneFile(Number(node.size), streamed);
  }

  async #previousTree(previous: TreeNode | undefined): Promise<PreviousTree | undefined> {
    // not only directories: ferry before 2026-11-22 recorded a symlinked folder above a backed-up path as a symlink
    // with a subtree, and such a snapshot can still be the parent
    if (!previous?.subtree) return undefined;
    const nodes = await this.#loadTree(previous.subtree);
    return nodes && { id: previous.subtree, nodes };
  }

  /** `streamed`: bytes of this file already counted while it was read */
  #doneFile(size: number, streamed = 0): void {
    this.#progress.filesDone++;
    this.#progress.bytesDone += size - streamed;
    this.#counters.totalFilesProcessed++;
    this.#counters.totalBytesProcessed += size;
    this.#tick.tick();
  }

  async #saveTree(nodes: TreeNode[]): Promise<ID> {
    const bytes = encodeTree(nodes);
    const id = hashID(bytes);
    if (this.#writer.claim('tree', id)) {
      await this.#writer.add(
        prepareBlob(this.#repo.key, 'tree', id, bytes, this.#compression),
        bytes.length,
        this.#opts.signal,
      );
    }
    return id;
  }

  /**
   * A tree of the parent snapshot, or undefined when it breaks restic's invariants: the files below it are then read
   * as new, with a warning (as restic warns and goes on), rather than trusted or failing every later backup.
   */
  async #loadTree(id: ID): Promise<TreeNode[] | undefined> {
    try {
      // files' blob ids are not looked up here: a file whose blobs are gone is read again (the writer is asked)
      return await this.#repo.loadTree(id, this.#opts.signal, false);
    } catch (err) {
      if (!(err instanceof InvalidTreeError)) throw err;
      (this.#opts.onWarning ?? ((m) => process.emitWarning(m)))(
        `parent snapshot: ${err.message}; the files below it are read as new`,
      );
      return undefined;
    }
  }
}

/** A directory as the parent snapshot stored it. */
interface PreviousTree {
  id: ID;
  nodes: TreeNode[];
}

/** Work admitted but not finished. A wrapper, because an async function cannot resolve to a bare promise. */
interface Pending<T> {
  done: Promise<T>;
}

function pending<T>(done: Promise<T>): Pending<T> {
  // failures surface where `done` is awaited; this keeps Node from calling them unhandled in the meantime
  done.catch(() => undefined);
  return { done };
}

function unchanged(prev: TreeNode, cur: TreeNode): boolean {
  return prev.type === 'file' && prev.size === cur.size && prev.mtime.ns === cur.mtime.ns;
}

interface VirtualDir {
  name: Buffer;
  leaf: boolean;
  children: Map<string, VirtualDir>;
}

/** The directories above each backed-up path become trees of their own, so the snapshot keeps absolute paths. */
export function buildVirtualTree(paths: string[]): VirtualDir {
  const root: VirtualDir = { name: Buffer.alloc(0), leaf: false, children: new Map() };
  for (const p of paths) {
    if (!p.startsWith('/')) throw new Error(`backup path "${p}" must be absolute`);
    const parts = p.split('/').filter((s) => s.length > 0);
    if (parts.length === 0) throw new Error('backing up "/" itself is not supported; name the directories below it');
    let dir = root;
    parts.forEach((part, i) => {
      let next = dir.children.get(part);
      if (!next) {
        next = { name: Buffer.from(part), leaf: false, children: new Map() };
        dir.children.set(part, next);
      }
      if (i === parts.length - 1) next.leaf = true;
      dir = next;
    });
  }
  return root;
}
