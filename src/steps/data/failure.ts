// Failures retrying cannot fix (a missing PVC, a wrong password, a snapshot that never became ready): the
// runner records them as phase Failing with the message, and finalize cleans up. Everything else is treated as
// transient: the process exits non-zero and the Job (or the sweep) runs the step again.
import { LocationError } from '../../shared/location/access.ts';
import {
  AmbiguousSnapshotIDError,
  isPermanent,
  RepositoryError,
  RestoreError,
  SnapshotNotFoundError,
} from '../../engine/operations/errors.ts';

export class StepFailure extends Error {
  override name = 'StepFailure';
  /** UpperCamelCase reason for the Event and the condition */
  readonly reason: string;

  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The resource moved on (or went away) while the step worked: someone else owns it now. */
export class PhaseMovedError extends Error {
  override name = 'PhaseMovedError';
}

export function isPermanentFailure(err: unknown): boolean {
  return (
    err instanceof StepFailure ||
    err instanceof LocationError ||
    err instanceof RepositoryError ||
    err instanceof RestoreError ||
    err instanceof SnapshotNotFoundError ||
    err instanceof AmbiguousSnapshotIDError ||
    isPermanent(err)
  );
}

export function failureReason(err: unknown): string {
  if (err instanceof StepFailure) return err.reason;
  if (err instanceof LocationError) return 'StorageLocationInvalid';
  if (err instanceof RepositoryError) return 'RepositoryError';
  return 'Error';
}
