// The status writes of whoever dispatches (the dispatcher, its sweep, `ferry rerun`): each re-reads the stored
// resource, since it may have moved on since it was read, changes it only if the change still applies, and
// records an Event when it did.
import type { FerryResource } from '../api/types.ts';
import { emitEvent, type EventInput } from '../kube/events.ts';
import type { Kube, KubeObject } from '../kube/kube.ts';
import type { Logger } from '../kube/logger.ts';
import type { KindName } from '../kube/resources.ts';
import { updateStatus } from '../kube/status.ts';
import { cancelReason } from './decide.ts';
import { isOurs } from '../step-job/contract.ts';

export type Resource = FerryResource & KubeObject;

export interface StatusWriter {
  kube: Kube;
  log: Logger;
  /** name of this process in Events */
  instance: string;
}

export function describe(r: { kind: string; metadata: { name: string; namespace?: string } }): string {
  return `${r.kind} ${r.metadata.namespace}/${r.metadata.name}`;
}

/** `change` returns false when the fresh resource needs no write (and no Event). */
export async function writeResource<T extends KubeObject & { kind: KindName }>(
  w: StatusWriter,
  resource: T,
  change: (fresh: T) => boolean | void,
  event?: EventInput,
): Promise<void> {
  const fresh = await w.kube.get<T>({
    kind: resource.kind,
    namespace: resource.metadata.namespace ?? '',
    name: resource.metadata.name,
  });
  if (!fresh || fresh.metadata.uid !== resource.metadata.uid) return;
  let changed = false;
  const written = await updateStatus(w.kube, fresh, (f) => {
    const result = change(f);
    changed = result !== false;
    return result;
  });
  if (!changed || !event) return;
  try {
    await emitEvent(w.kube, written, event, { controller: 'ferry.dev/dispatcher', instance: w.instance });
  } catch (err) {
    w.log.warn('could not record an Event', {
      resource: describe(resource),
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/** Moves the resource to Canceling, if it still asks for it and may still be canceled. */
export async function moveToCanceling(w: StatusWriter, resource: Resource, why: string): Promise<void> {
  await writeResource(
    w,
    resource,
    (fresh) => {
      if (!isOurs(fresh) || cancelReason(fresh) === undefined) return false;
      fresh.status = {
        ...fresh.status,
        phase: 'Canceling',
        message: `Canceling from phase ${fresh.status?.phase ?? 'New'}: ${why}.`,
      };
    },
    { type: 'Normal', reason: 'Canceling', note: `Canceling: ${why}; finalize cleans up.`, action: 'Cancel' },
  );
}
