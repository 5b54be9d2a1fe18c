// Error shapes shared by every backend, so wrappers (retry) and callers can classify failures
// without knowing which storage produced them.

import { isID } from '../ids/id.ts';
import { objectPath, PermanentError } from './backend.ts';
import type { Handle } from './backend.ts';

/** A file that is not there. Retrying cannot make it appear, so it is also permanent. */
export class NotExistError extends PermanentError {
  readonly notExist = true;
  constructor(location: string, h: Handle, options?: ErrorOptions) {
    super(`${objectPath(h)} does not exist in ${location}.`, options);
  }
}

export function isNotExistError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { notExist?: unknown }).notExist === true;
}

/** A file S3 Object Lock retains: it cannot be removed before `until` (null: a legal hold), and nothing was tried. */
export class LockedError extends PermanentError {
  readonly locked = true;
  readonly handle: Handle;
  readonly until: Date | null;
  constructor(location: string, h: Handle, until: Date | null) {
    super(
      `${objectPath(h)} in ${location} is under ${until ? `S3 Object Lock retention until ${until.toISOString()}` : 'an S3 Object Lock legal hold'}.`,
    );
    this.handle = h;
    this.until = until;
  }
}

export function isLockedError(err: unknown): err is LockedError {
  return err instanceof LockedError;
}

/** True for the rejection an AbortSignal causes, which must end work rather than be retried. */
export function isAbort(err: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  // TimeoutError is deliberately absent: the HTTP layer uses that name for connection timeouts, which are transient
  return err instanceof Error && err.name === 'AbortError';
}

/** Rejects names that could escape the layout: every file but `config` is named by a 64-hex-digit ID. */
export function checkHandle(h: Handle): void {
  if (h.type !== 'config' && !isID(h.name)) {
    throw new PermanentError(`Invalid ${h.type} name "${h.name}": expected 64 lowercase hex digits.`);
  }
}

/** Validates a requested byte range against the file size and returns the end offset (exclusive). */
export function rangeEnd(location: string, h: Handle, size: number, offset: number, length: number): number {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new PermanentError(`Invalid range offset=${offset} length=${length} for ${objectPath(h)}.`);
  }
  const end = length === 0 ? size : offset + length;
  if (end > size || offset > size) {
    throw new PermanentError(
      `${objectPath(h)} in ${location} is ${size} bytes, too short for ${length || 'the rest'} bytes at offset ${offset}.`,
    );
  }
  return end;
}
