// Removing repository files where S3 Object Lock may retain some: each retained file is left in place, without a
// delete being tried, and reported with the date its retention ends, so a later prune or forget frees it then.
import type { Backend, FileType } from '../backend/backend.ts';
import { isLockedError } from '../backend/errors.ts';
import { mapConcurrent } from '../concurrency/map.ts';
import type { ID } from '../ids/id.ts';

/** A file that stays because its retention has not ended. */
export interface Retained {
  type: FileType;
  name: ID;
  /** null: a legal hold, which ends only when someone lifts it */
  until: Date | null;
}

/** Removes the files but the retained ones, which it returns; `onRemoved` is told of each file removed. */
export async function removeUnlessRetained(
  backend: Backend,
  type: FileType,
  names: readonly ID[],
  onRemoved?: (name: ID) => void,
): Promise<Retained[]> {
  const retained: Retained[] = [];
  await mapConcurrent(names, 8, async (name) => {
    try {
      await backend.remove({ type, name });
      onRemoved?.(name);
    } catch (err) {
      if (!isLockedError(err)) throw err;
      retained.push({ type, name, until: err.until });
    }
  });
  return retained;
}
