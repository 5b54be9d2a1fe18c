// What an AppBackup makes carries an owner reference to it (the garbage collector removes leftovers with it), and a
// rerun adopts an object of the expected name only when that reference names this AppBackup's uid: a name taken by
// someone else is never mistaken for its own work.
import { apiVersion, type ObjectMeta } from '../../shared/api/types.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { AppBackupObject } from './context.ts';

type OwnerReference = NonNullable<ObjectMeta['ownerReferences']>[number];

export function ownerOf(ab: AppBackupObject): OwnerReference {
  return {
    apiVersion,
    kind: 'AppBackup',
    name: ab.metadata.name,
    uid: ab.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function ownedBy(obj: KubeObject, owner: { kind: string; uid?: string }): boolean {
  return Boolean(owner.uid && obj.metadata.ownerReferences?.some((o) => o.kind === owner.kind && o.uid === owner.uid));
}

/** Why `found` (an object of the name this AppBackup uses) is not its own, for a Failed message. */
export function notOwned(found: KubeObject, ab: AppBackupObject): string {
  return `${found.kind} ${found.metadata.namespace}/${found.metadata.name} exists and is not owned by AppBackup ${ab.metadata.name} (uid ${ab.metadata.uid}); ferry does not adopt it`;
}
