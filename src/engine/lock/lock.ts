// Repository locks, as restic keeps them: a small unpacked file per holder under locks/. Backups and restores hold
// shared locks, prune, forget and check an exclusive one (src/engine/operations/ decides which). A lock not
// refreshed for 30 minutes, or held by a dead process on this host, is stale and ignored; holders refresh theirs
// every 5 minutes by writing a new file and removing the old. A holder that finds its lock removed (an unlock), or
// cannot refresh it for 22.5 minutes (before others may call it stale), has lost it: its `signal` aborts, so the
// operation stops rather than run on beside a prune, as restic's does.
import { hostname as osHostname, userInfo } from 'node:os';
import type { ID } from '../ids/id.ts';
import { sleep } from '../concurrency/sleep.ts';

export const staleAfterMs = 30 * 60 * 1000;
export const refreshEveryMs = 5 * 60 * 1000;
/** restic's margin: a lock is given up a little before others may call it stale, to allow for clock drift */
const refreshableForMs = staleAfterMs - (refreshEveryMs * 3) / 2;

export interface LockInfo {
  time: Date;
  exclusive: boolean;
  hostname: string;
  username: string;
  pid: number;
  uid: number;
  gid: number;
}

export interface LockStore {
  list(): AsyncIterable<ID>;
  load(id: ID): Promise<Uint8Array>;
  save(plaintext: Uint8Array): Promise<ID>;
  remove(id: ID): Promise<void>;
  isNotExist(err: unknown): boolean;
}

export class LockConflictError extends Error {}

/** The lock was removed by someone else, or could not be refreshed in time: the operation holding it must stop. */
export class LockLostError extends Error {}

export function newLockInfo(exclusive: boolean, now = new Date()): LockInfo {
  let username = '';
  try {
    username = userInfo().username;
  } catch {
    // no passwd entry for our uid (common in containers): leave the name empty
  }
  return {
    time: now,
    exclusive,
    hostname: osHostname(),
    username,
    pid: process.pid,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
  };
}

export function encodeLock(l: LockInfo): Uint8Array {
  return Buffer.from(
    JSON.stringify({
      time: l.time.toISOString(),
      exclusive: l.exclusive,
      hostname: l.hostname,
      username: l.username,
      pid: l.pid,
      uid: l.uid,
      gid: l.gid,
    }),
  );
}

export function decodeLock(bytes: Uint8Array): LockInfo {
  const raw = JSON.parse(Buffer.from(bytes).toString('utf8')) as Partial<Record<keyof LockInfo, unknown>>;
  return {
    time: new Date(String(raw.time)),
    exclusive: raw.exclusive === true,
    hostname: String(raw.hostname ?? ''),
    username: String(raw.username ?? ''),
    pid: Number(raw.pid ?? 0),
    uid: Number(raw.uid ?? 0),
    gid: Number(raw.gid ?? 0),
  };
}

/** Why a lock is stale, or '' when it is live. `now` is passed in so the policy is testable. */
export function staleReason(l: LockInfo, now: Date, localHost = osHostname(), alive = processAlive): string {
  const age = now.getTime() - l.time.getTime();
  if (Number.isNaN(age)) return 'its time is unreadable';
  if (age > staleAfterMs) return `it was last refreshed ${Math.round(age / 60000)} minutes ago`;
  if (l.hostname === localHost && !alive(l.pid)) return `its process ${l.pid} on ${l.hostname} is gone`;
  return '';
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function describe(l: LockInfo): string {
  return `${l.username || 'someone'}@${l.hostname} (pid ${l.pid}, ${l.exclusive ? 'an exclusive' : 'a shared'} lock since ${l.time.toISOString()})`;
}

/** Live locks other than `own` that conflict with taking a lock of the given kind. */
async function conflicts(store: LockStore, exclusive: boolean, own: ID | undefined, now: Date): Promise<string[]> {
  const found: string[] = [];
  for await (const id of store.list()) {
    if (id === own) continue;
    let info: LockInfo;
    try {
      info = decodeLock(await store.load(id));
    } catch (err) {
      if (store.isNotExist(err)) continue; // removed while we listed
      throw err;
    }
    if (staleReason(info, now)) continue;
    if (exclusive || info.exclusive) found.push(describe(info));
  }
  return found;
}

export interface LockOptions {
  exclusive: boolean;
  /** keep trying this long while another holder conflicts */
  waitMs?: number;
  signal?: AbortSignal;
  /** told once, with the holder, when another holder makes this taker wait */
  onWait?: (message: string) => void;
  /** how often the lock is refreshed (tests shorten it) */
  refreshEveryMs?: number;
}

/** A held lock; `release()` removes it and stops the refresh timer. */
export class Lock {
  readonly #store: LockStore;
  readonly #exclusive: boolean;
  readonly #lost = new AbortController();
  #id: ID;
  #timer: NodeJS.Timeout;
  #refreshing: Promise<void> = Promise.resolve();
  #refreshedAt = Date.now();

  private constructor(store: LockStore, id: ID, exclusive: boolean, everyMs: number) {
    this.#store = store;
    this.#id = id;
    this.#exclusive = exclusive;
    this.#timer = setInterval(() => void this.#refreshOrGiveUp(), everyMs);
    this.#timer.unref();
  }

  get id(): ID {
    return this.#id;
  }

  /** Aborted, with a LockLostError, once the lock can no longer be vouched for. */
  get signal(): AbortSignal {
    return this.#lost.signal;
  }

  static async acquire(store: LockStore, opts: LockOptions): Promise<Lock> {
    const deadline = Date.now() + (opts.waitMs ?? 0);
    let told = false;
    for (;;) {
      opts.signal?.throwIfAborted();
      // check, take, check again: two takers racing both see each other and back off
      let found = await conflicts(store, opts.exclusive, undefined, new Date());
      if (found.length === 0) {
        const id = await store.save(encodeLock(newLockInfo(opts.exclusive)));
        found = await conflicts(store, opts.exclusive, id, new Date());
        if (found.length === 0) return new Lock(store, id, opts.exclusive, opts.refreshEveryMs ?? refreshEveryMs);
        await store.remove(id);
      }
      if (Date.now() >= deadline) throw new LockConflictError(`the repository is locked by ${found[0]}`);
      if (!told)
        opts.onWait?.(
          `the repository is locked by ${found[0]}; waiting up to ${Math.ceil((deadline - Date.now()) / 1000)} s`,
        );
      told = true;
      await sleep(Math.min(1000 + Math.random() * 2000, Math.max(0, deadline - Date.now())), opts.signal);
    }
  }

  /** Writes a fresh lock file and removes the old one; a LockLostError when the old one was removed by someone else. */
  refresh(): Promise<void> {
    this.#refreshing = this.#refreshing.then(async () => {
      const old = this.#id;
      try {
        await this.#store.load(old);
      } catch (err) {
        if (this.#store.isNotExist(err))
          throw new LockLostError(
            `the repository lock ${old.slice(0, 8)} was removed by someone else (an unlock?) while this operation held it`,
          );
        throw err;
      }
      this.#id = await this.#store.save(encodeLock(newLockInfo(this.#exclusive)));
      this.#refreshedAt = Date.now();
      await this.#store.remove(old);
    });
    return this.#refreshing;
  }

  async #refreshOrGiveUp(): Promise<void> {
    try {
      await this.refresh();
    } catch (err) {
      if (err instanceof LockLostError) this.#lose(err);
      else if (Date.now() - this.#refreshedAt > refreshableForMs) {
        this.#lose(
          new LockLostError(
            `the repository lock could not be refreshed for ${Math.round((Date.now() - this.#refreshedAt) / 60000)} minutes: ${(err as Error).message}`,
          ),
        );
      }
      this.#refreshing = Promise.resolve();
    }
  }

  #lose(err: LockLostError): void {
    clearInterval(this.#timer);
    this.#lost.abort(err);
  }

  async release(): Promise<void> {
    clearInterval(this.#timer);
    await this.#refreshing.catch(() => undefined);
    try {
      await this.#store.remove(this.#id);
    } catch (err) {
      if (!this.#store.isNotExist(err)) throw err; // removed by someone else: gone either way
    }
  }
}

/** Why a lock may be removed, or '' to keep it; it may ask the outside world (e.g. whether the holder still runs). */
export type LockJudge = (info: LockInfo, id: ID) => string | Promise<string>;

export interface RemovedLock {
  id: ID;
  info: LockInfo;
  reason: string;
}

/** Removes the locks `judge` gives a reason for; returns what was removed and why. */
export async function removeLocksWhere(store: LockStore, judge: LockJudge): Promise<RemovedLock[]> {
  const removed: RemovedLock[] = [];
  for await (const id of store.list()) {
    let info: LockInfo;
    try {
      info = decodeLock(await store.load(id));
    } catch (err) {
      if (store.isNotExist(err)) continue;
      throw err;
    }
    const reason = await judge(info, id);
    if (!reason) continue;
    try {
      await store.remove(id);
    } catch (err) {
      if (!store.isNotExist(err)) throw err; // its holder released it meanwhile: gone either way
    }
    removed.push({ id, info, reason });
  }
  return removed;
}

/** Removes locks that are stale; returns what was removed and why. */
export function removeStaleLocks(store: LockStore, now = new Date()): Promise<RemovedLock[]> {
  return removeLocksWhere(store, (info) => staleReason(info, now));
}
