// Who may make a mirror of a Velero object: only ferry's own dispatcher and sweep, since a mirror's annotations
// make the dispatcher write into a Velero object and decide when a Velero backup's data may go. Nobody may add,
// change or remove those annotations afterwards. The user name comes from the apiserver, which fills it in from
// the caller's credentials; a forged review could only get itself a denial (./stored.ts).
import { isDeepStrictEqual } from 'node:util';
import type { FerryResource } from '../shared/api/types.ts';
import { mirrorAnnotations } from '../shared/velero/mirror.ts';
import { forbidden } from './admission.ts';
import type { Denial } from './admission.ts';

const keys: readonly string[] = Object.values(mirrorAnnotations);

function mirrorPart(r: FerryResource): Record<string, string> {
  return Object.fromEntries(Object.entries(r.metadata.annotations ?? {}).filter(([k]) => keys.includes(k)));
}

/** The users that act for ferry in its namespace. */
export function ferryUsers(namespace: string): string[] {
  return ['ferry-dispatcher', 'ferry-sweep'].map((sa) => `system:serviceaccount:${namespace}:${sa}`);
}

export function checkMirrorCreate(r: FerryResource, user: string | undefined, namespace: string): Denial | undefined {
  if (Object.keys(mirrorPart(r)).length === 0) return undefined;
  if (user && ferryUsers(namespace).includes(user)) return undefined;
  return forbidden(
    `metadata.annotations: ${keys.join(', ')} mark a mirror of a Velero object, which only ferry's dispatcher creates; remove them`,
  );
}

export function checkMirrorUpdate(old: FerryResource, next: FerryResource): Denial | undefined {
  if (isDeepStrictEqual(mirrorPart(old), mirrorPart(next))) return undefined;
  return forbidden(`metadata.annotations: ${keys.join(', ')} cannot be added, changed or removed`);
}
