// The two resources `ferry backup` and `ferry restore` wrap, and the words users may type for them.
import type { FerryResource, ResourceKind } from '../../shared/api/types.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { kubeArgs } from '../resource/kube.ts';
import { outputArgs } from '../resource/output.ts';

export type Resource = FerryResource & KubeObject;

/** The noun the CLI uses for each kind: `ferry backup ...` works on DataUploads. */
export const nouns: Record<ResourceKind, 'backup' | 'restore'> = { DataUpload: 'backup', DataDownload: 'restore' };

/** KIND in `ferry rerun|cancel KIND/NAME`. */
export const kindAliases: Readonly<Record<string, ResourceKind>> = {
  dataupload: 'DataUpload',
  datauploads: 'DataUpload',
  du: 'DataUpload',
  backup: 'DataUpload',
  datadownload: 'DataDownload',
  datadownloads: 'DataDownload',
  dd: 'DataDownload',
  restore: 'DataDownload',
};

/** `dataupload/nightly`, as kubectl names objects. */
export function refOf(r: Resource): string {
  return `${r.kind.toLowerCase()}/${r.metadata.name}`;
}

/** NAME, the required argument of a command about one resource of `kind`. */
export function nameArg(kind: ResourceKind) {
  return { type: 'positional', required: true, description: `the ${kind}`, valueHint: 'NAME' } as const;
}

/** The arguments of a command that shows one resource: NAME, the cluster flags, -o. */
export function showOneArgs(kind: ResourceKind) {
  return { name: nameArg(kind), ...kubeArgs, ...outputArgs };
}
