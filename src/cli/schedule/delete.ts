// `ferry schedule delete NAME [--delete-backups]`: the schedule goes with its CronJob; its backups stay unless
// --delete-backups asks for them (and their repository data) to go too.
import { defineCommand } from 'citty';
import { consola } from 'consola';
import { scheduleAnnotations } from '../../shared/schedule/names.ts';
import { fetchOne } from '../resource/fetch.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import type { Schedule } from './create.ts';

export default defineCommand({
  meta: { name: 'delete', description: 'Delete a schedule (its backups stay unless --delete-backups)' },
  args: {
    name: { type: 'positional', required: true, description: 'the schedule', valueHint: 'NAME' },
    'delete-backups': { type: 'boolean', description: 'also delete the DataUploads it made, and their repository data', default: false },
    ...kubeArgs,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const name = objectName(args.name, 'NAME');
    await withKube(args, async ({ kube, namespace }) => {
      const key = { kind: 'BackupSchedule', namespace, name } as const;
      const schedule = await fetchOne<Schedule>(kube, 'BackupSchedule', namespace, name);
      if (args['delete-backups']) await kube.patch(key, { metadata: { annotations: { [scheduleAnnotations.deleteBackups]: 'true' } } });
      await kube.delete(key, { uid: schedule.metadata.uid });
      if (isDocument(format)) printDocument({ kind: 'BackupSchedule', namespace, name, deleted: true, deleteBackups: args['delete-backups'] }, format);
      else consola.success(`BackupSchedule ${namespace}/${name} deleted${args['delete-backups'] ? ' with its backups' : '; its backups stay'}`);
    });
  },
});
