// ferry as Velero's data mover. A Velero DataUpload or DataDownload in Velero's namespace whose spec.datamover is
// "ferry" gets a mirror (src/shared/velero/mirror.ts): a ferry resource that the usual steps carry through, in the
// namespace the data belongs to. The bridge creates the mirror, hands Velero's cancel on to it, writes what the
// mirror reaches back into the Velero object, and once Velero has dropped an object (its backup deleted, or the
// object removed while it ran) cancels or deletes the mirror, whose finalizer then frees the data. Every call
// works from objects it reads itself, so the webhook (on every change of either side) and the sweep (every minute)
// may both call it, any number of times.
import type { BackupStorageLocation, FerryResource } from '../shared/api/types.ts';
import { terminalPhases } from '../shared/api/phases.ts';
import { rfc3339 } from '../shared/kube/conditions.ts';
import { isAlreadyExists, isConflict, isNotFound, KubeError } from '../shared/kube/errors.ts';
import type { Kube, KubeObject, ObjectKey } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { mirroredBackup } from '../shared/velero/backup-exists.ts';
import {
  asksForFerry,
  downloadMirror,
  isMirror,
  mirrorName,
  mirrorNamespace,
  mirroredObject,
  uploadMirror,
} from '../shared/velero/mirror.ts';
import { mirrorStatus, refusedStatus, statusPatch } from '../shared/velero/status.ts';
import { veleroTerminal } from '../shared/velero/types.ts';
import type { VeleroObject, VeleroStatus } from '../shared/velero/types.ts';

export interface VeleroBridgeDeps {
  kube: Kube;
  /** ferry's namespace: its locations */
  namespace: string;
  /** Velero's namespace: only objects there are Velero's */
  veleroNamespace: string;
  log: Logger;
  now: () => Date;
}

type Kind = VeleroObject['kind'];

const veleroKind = { DataUpload: 'VeleroDataUpload', DataDownload: 'VeleroDataDownload' } as const;

type Stored = VeleroObject & KubeObject;

/** A list gives items without their kind, and Velero's kind names are ferry's own: the kind is set here. */
function ofKind(kind: Kind, o: object): VeleroObject {
  return { ...o, kind } as VeleroObject;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class VeleroBridge {
  readonly #d: VeleroBridgeDeps;

  constructor(deps: VeleroBridgeDeps) {
    this.#d = deps;
  }

  get namespace(): string {
    return this.#d.veleroNamespace;
  }

  /** Whether an object (as read from the apiserver) is one ferry should do: in Velero's namespace, naming ferry. */
  mine(v: VeleroObject): boolean {
    return v.metadata.namespace === this.#d.veleroNamespace && asksForFerry(v);
  }

  #key(kind: Kind, name: string): ObjectKey {
    return { kind: veleroKind[kind], namespace: this.#d.veleroNamespace, name };
  }

  /** A Velero object changed, or is gone (`after` undefined, `before` its last version). */
  async veleroChanged(kind: Kind, after: VeleroObject | undefined, before?: VeleroObject): Promise<void> {
    const v = after ?? before;
    if (!v) return;
    const obj = ofKind(kind, v);
    if (!this.mine(obj)) return;
    if (!after || after.metadata.deletionTimestamp) {
      await this.#dropped(obj);
      return;
    }
    if (obj.status?.phase && veleroTerminal.includes(obj.status.phase)) return;
    const mirror = await this.#mirrorOf(obj);
    if (!mirror) {
      if (obj.spec.cancel) await this.#writeStatus(obj, { phase: 'Canceled', message: 'Canceled before ferry began.' });
      else await this.#createMirror(obj);
      return;
    }
    if (mirroredObject(mirror)?.uid !== obj.metadata.uid) {
      const where = `${mirror.kind} ${mirror.metadata.namespace}/${mirror.metadata.name}`;
      await this.#writeStatus(
        obj,
        refusedStatus(`ferry cannot take this object: ${where} exists and is not its.`, this.#d.now()),
      );
      return;
    }
    if (obj.spec.cancel && !mirror.spec.cancel) {
      await this.#d.kube.patch(this.#mirrorKey(obj), { spec: { cancel: true } });
      this.#d.log.info('Velero canceled; canceling the mirror', { velero: obj.metadata.name });
    }
    await this.#writeStatus(obj, mirrorStatus(mirror));
  }

  /** A mirror changed: Velero's object shows what it reached. */
  async mirrorChanged(mirror: FerryResource): Promise<void> {
    const v = await this.#objectOf(mirror);
    if (v) await this.#writeStatus(v, mirrorStatus(mirror));
  }

  /**
   * The Velero object a mirror stands for: undefined for a mirror of another namespace's object (only ferry's
   * dispatcher can make one, but the check is cheap), null once that object (this incarnation) is gone.
   */
  async #objectOf(mirror: FerryResource): Promise<VeleroObject | null | undefined> {
    const ref = mirroredObject(mirror);
    if (!ref || ref.namespace !== this.#d.veleroNamespace) return undefined;
    const v = await this.#d.kube.get<Stored>(this.#key(mirror.kind, ref.name));
    return v && v.metadata.uid === ref.uid ? ofKind(mirror.kind, v) : null;
  }

  /** One pass over both sides, for what a lost webhook call left undone. Returns what it could not do. */
  async sweep(mirrors: readonly FerryResource[]): Promise<string[]> {
    const errors: string[] = [];
    for (const kind of ['DataUpload', 'DataDownload'] as const) {
      const objects = await this.#d.kube.list<Stored>(veleroKind[kind], { namespace: this.#d.veleroNamespace });
      for (const o of objects) {
        await this.veleroChanged(kind, ofKind(kind, o)).catch((err) =>
          errors.push(`Velero ${kind} ${o.metadata.name}: ${message(err)}`),
        );
      }
    }
    for (const mirror of mirrors.filter(isMirror)) {
      await this.#sweepMirror(mirror).catch((err) =>
        errors.push(`${mirror.kind} ${mirror.metadata.namespace}/${mirror.metadata.name}: ${message(err)}`),
      );
    }
    return errors;
  }

  async #sweepMirror(mirror: FerryResource): Promise<void> {
    const v = await this.#objectOf(mirror);
    if (v) await this.#writeStatus(v, mirrorStatus(mirror));
    else if (v === null) await this.#mirrorOrphaned(mirror);
  }

  /** Velero deleted its object: the work stops, and a finished backup's data goes once its backup is gone too. */
  async #dropped(v: VeleroObject): Promise<void> {
    const mirror = await this.#mirrorOf(v);
    if (mirror && mirroredObject(mirror)?.uid === v.metadata.uid) await this.#mirrorOrphaned(mirror);
  }

  async #mirrorOrphaned(mirror: FerryResource): Promise<void> {
    if (mirror.metadata.deletionTimestamp) return;
    const key = { kind: mirror.kind, namespace: mirror.metadata.namespace, name: mirror.metadata.name };
    const phase = mirror.status?.phase ?? 'New';
    if (!terminalPhases.includes(phase)) {
      // a running backup or restore whose Velero object is gone: nobody waits for it any more
      if (!mirror.spec.cancel) await this.#d.kube.patch(key, { spec: { cancel: true } });
      return;
    }
    if (mirror.kind === 'DataUpload' && phase === 'Completed' && (await this.#backupExists(mirror))) return;
    // a restore's record, a backup that never completed, or one whose Velero backup is gone: the mirror goes, and
    // its finalizer frees what it stored
    await this.#d.kube.delete(key, { uid: mirror.metadata.uid });
    this.#d.log.info('deleted the mirror of a Velero object that is gone', { mirror: `${key.namespace}/${key.name}` });
  }

  /** Whether the Velero Backup a mirror holds data for (this very Backup, by uid) still exists and is not being
   * deleted; a mirror naming no backup cannot be tied to one, and keeps its data. */
  async #backupExists(mirror: FerryResource): Promise<boolean> {
    const backup = await mirroredBackup(this.#d.kube, mirror);
    if (!backup) return true;
    return backup.live !== undefined && (!backup.uid || backup.live.metadata.uid === backup.uid);
  }

  #mirrorKey(v: VeleroObject): ObjectKey {
    return { kind: v.kind, namespace: mirrorNamespace(v), name: mirrorName(v) };
  }

  async #mirrorOf(v: VeleroObject): Promise<FerryResource | undefined> {
    return this.#d.kube.get<FerryResource & KubeObject>(this.#mirrorKey(v));
  }

  async #createMirror(v: VeleroObject): Promise<void> {
    let location: string;
    try {
      location = await this.#locationFor(v.spec.backupStorageLocation);
    } catch (err) {
      await this.#writeStatus(v, refusedStatus(message(err), this.#d.now()));
      return;
    }
    const mirror = v.kind === 'DataUpload' ? uploadMirror(v, location) : downloadMirror(v, location);
    try {
      const created = await this.#d.kube.create(mirror as FerryResource & KubeObject);
      this.#d.log.info('took a Velero object', {
        velero: v.metadata.name,
        mirror: `${mirrorNamespace(v)}/${mirror.metadata.name}`,
      });
      await this.#writeStatus(v, { ...mirrorStatus(created), acceptedTimestamp: rfc3339(this.#d.now()) });
    } catch (err) {
      if (isAlreadyExists(err)) return;
      // ferry's admission refused the mirror (a location that does not allow the namespace, a missing PVC, ...):
      // the reason becomes Velero's error
      if (err instanceof KubeError && err.status >= 400 && err.status < 500 && err.status !== 409) {
        await this.#writeStatus(v, refusedStatus(`ferry refused the ${v.kind}: ${err.message}`, this.#d.now()));
        return;
      }
      throw err;
    }
  }

  /** The ferry location that stores the data of Velero's BackupStorageLocation `name`. */
  async #locationFor(name: string): Promise<string> {
    const all = await this.#d.kube.list<BackupStorageLocation & KubeObject>('BackupStorageLocation', {
      namespace: this.#d.namespace,
    });
    const serving = all.filter((l) => l.spec.velero?.backupStorageLocation === name).map((l) => l.metadata.name);
    if (serving.length === 1) return serving[0];
    if (serving.length === 0)
      throw new Error(
        `No ferry BackupStorageLocation in ${this.#d.namespace} serves Velero's BackupStorageLocation "${name}": set spec.velero.backupStorageLocation: ${name} on one (ferry install --velero shows how).`,
      );
    throw new Error(
      `Several ferry BackupStorageLocations serve Velero's BackupStorageLocation "${name}" (${serving.join(', ')}): keep spec.velero on one.`,
    );
  }

  /** Merge-patches the status (Velero's CRDs have no status subresource), never over a newer version: a
   * concurrent write (Velero setting spec.cancel) makes the patch fail, and it is worked out again. */
  async #writeStatus(v: VeleroObject, desired: VeleroStatus): Promise<void> {
    let current: VeleroObject | undefined = v;
    for (let attempt = 0; attempt < 3 && current; attempt++) {
      const patch = statusPatch(current, desired);
      if (!patch) return;
      try {
        await this.#d.kube.patch(this.#key(v.kind, v.metadata.name), {
          metadata: { resourceVersion: current.metadata.resourceVersion, uid: current.metadata.uid },
          ...patch,
        });
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err)) throw err;
        const fresh = await this.#d.kube.get<Stored>(this.#key(v.kind, v.metadata.name));
        current = fresh && fresh.metadata.uid === v.metadata.uid ? ofKind(v.kind, fresh) : undefined;
      }
    }
  }
}
