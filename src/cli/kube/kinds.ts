// The two resources `ferry backup` and `ferry restore` wrap, and the words users may type for them.
import type { FerryResource, ResourceKind } from '../../shared/api/types.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';

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
