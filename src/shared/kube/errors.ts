// Errors from the apiserver, with the HTTP status and the Status reason it sent, and the few questions callers
// ask of them: gone? taken? stale? worth retrying?

export class KubeError extends Error {
  readonly status: number;
  /** metav1.Status reason: NotFound, AlreadyExists, Conflict, Forbidden, Invalid, ... */
  readonly reason: string;

  constructor(status: number, reason: string, message: string) {
    super(message);
    this.name = 'KubeError';
    this.status = status;
    this.reason = reason;
  }
}

function statusOf(err: unknown): number | undefined {
  return err instanceof KubeError ? err.status : undefined;
}

export function isNotFound(err: unknown): boolean {
  return statusOf(err) === 404;
}

export function isAlreadyExists(err: unknown): boolean {
  return err instanceof KubeError && err.status === 409 && err.reason === 'AlreadyExists';
}

/** A write with a stale resourceVersion (or a precondition that no longer holds). */
export function isConflict(err: unknown): boolean {
  return err instanceof KubeError && err.status === 409 && err.reason !== 'AlreadyExists';
}

const transientCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
]);

/**
 * Worth another try: the apiserver is throttling, restarting or unreachable, or an admission webhook it calls is
 * down (it answers 500 "failed calling webhook"). Denials, invalid objects and missing rights are not.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof KubeError)
    return err.status === 429 || err.status >= 500 || err.reason === 'Timeout' || err.reason === 'ServerTimeout';
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && transientCodes.has(code)) return true;
  return err instanceof Error && /socket hang up|timed out/i.test(err.message);
}
