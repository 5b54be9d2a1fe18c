// `ferry location delete NAME`: the BackupStorageLocation and the Secrets `location create` wrote for it. The
// bucket's data is never touched here: backups still naming the location are refused (deleting them first frees
// their data, through their delete step, which needs the location), unless --keep-data leaves it in the bucket.
import { defineCommand } from 'citty';
import type { DataUpload } from '../../shared/api/types.ts';
import { KubeError } from '../../shared/kube/errors.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { labelValue } from '../../shared/kube/names.ts';
import type { StoredLocation } from '../../shared/location/check.ts';
import { consola } from '../console.ts';
import { fetchOne } from '../resource/fetch.ts';
import { withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { locationKubeArgs } from './flags.ts';

/** The backups that name the location, or undefined when the user may not list them all. */
async function backupsIn(kube: Kube, location: string): Promise<string[] | undefined> {
  try {
    const all = await kube.list<DataUpload & KubeObject>('DataUpload');
    return all
      .filter((du) => du.spec.backupStorageLocation === location)
      .map((du) => `${du.metadata.namespace}/${du.metadata.name}`)
      .sort();
  } catch (err) {
    if (err instanceof KubeError && err.status === 403) return undefined;
    throw err;
  }
}

/** The Secrets the location names that `location create` wrote (labelled for it); others are the user's. */
async function secretsMadeFor(kube: Kube, l: StoredLocation): Promise<string[]> {
  const named = [...new Set([l.spec.credential.name, l.spec.repositoryPassword.name])];
  const ours: string[] = [];
  for (const name of named) {
    const s = await kube.get({ kind: 'Secret', namespace: l.metadata.namespace, name });
    if (s?.metadata.labels?.['ferry.dev/location'] === labelValue(l.metadata.name)) ours.push(name);
  }
  return ours;
}

function bucketOf(l: StoredLocation): string {
  return `s3://${l.spec.s3.bucket}${l.spec.s3.prefix ? `/${l.spec.s3.prefix}` : ''}/ at ${l.spec.s3.endpoint}`;
}

export default defineCommand({
  meta: {
    name: 'delete',
    description: 'Delete a storage location and the Secrets `location create` made for it; the bucket keeps its data',
  },
  args: {
    name: { type: 'positional', required: true, description: 'the location', valueHint: 'NAME' },
    'keep-data': {
      type: 'boolean',
      description: 'delete it even though backups still name it, leaving their data in the bucket',
      default: false,
    },
    ...locationKubeArgs,
  },
  async run({ args }) {
    const name = objectName(args.name, 'NAME');
    await withKube(args, async ({ kube, ferryNamespace }) => {
      const l = await fetchOne<StoredLocation>(kube, 'BackupStorageLocation', ferryNamespace, name);
      const backups = await backupsIn(kube, name);
      if (!args['keep-data'] && (backups === undefined || backups.length > 0)) {
        const which =
          backups === undefined
            ? 'you may not list the backups of every namespace, so whether any still keep data in it is unknown'
            : `${backups.length} backup(s) still keep data in it (${backups.slice(0, 5).join(', ')}${backups.length > 5 ? ', ...' : ''})`;
        throw new Error(
          `BackupStorageLocation ${name} was not deleted: ${which}. Delete them first (\`ferry backup delete NAME -n NS --wait\`, or -l SELECTOR), which frees their data in the bucket, or pass --keep-data to delete the location and leave their data in ${bucketOf(l)}.`,
        );
      }
      const secrets = await secretsMadeFor(kube, l);
      await kube.delete({ kind: 'BackupStorageLocation', namespace: ferryNamespace, name });
      for (const secret of secrets) await kube.delete({ kind: 'Secret', namespace: ferryNamespace, name: secret });
      const removed = secrets.length > 0 ? ` and its Secret(s) ${secrets.join(', ')}` : '';
      consola.success(
        `BackupStorageLocation ${name}${removed} deleted from ${ferryNamespace}. The bucket keeps what is in ${bucketOf(l)} ` +
          `(each namespace's repository: its keys and config${backups?.length ? ', and the data of the backups that named it' : ''}); ` +
          `ferry no longer reads or writes it. Remove a repository you no longer need with your S3 tool, e.g. ` +
          `\`aws s3 rm --recursive s3://${l.spec.s3.bucket}/${l.spec.s3.prefix ? `${l.spec.s3.prefix}/` : ''}NAMESPACE/\`.`,
      );
    });
  },
});
