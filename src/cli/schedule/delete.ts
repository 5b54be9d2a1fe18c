// `ferry schedule delete NAME [--delete-backups]`: the schedule goes with its CronJob; its backups stay unless
// --delete-backups asks for them (and their repository data) to go too.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { scheduleAnnotations } from '../../shared/schedule/names.ts';
import { isDocument, printDocument } from '../resource/output.ts';
import { oneScheduleArgs, withSchedule } from './one.ts';

export default defineCommand({
  meta: { name: 'delete', description: 'Delete a schedule (its backups stay unless --delete-backups)' },
  args: {
    ...oneScheduleArgs,
    'delete-backups': {
      type: 'boolean',
      description: 'also delete the DataUploads it made, and their repository data',
      default: false,
    },
  },
  async run({ args }) {
    await withSchedule(args, async ({ kube, namespace, schedule, format }) => {
      const name = schedule.metadata.name;
      const key = { kind: 'BackupSchedule', namespace, name } as const;
      if (args['delete-backups'])
        await kube.patch(key, { metadata: { annotations: { [scheduleAnnotations.deleteBackups]: 'true' } } });
      await kube.delete(key, { uid: schedule.metadata.uid });
      if (isDocument(format))
        printDocument(
          { kind: 'BackupSchedule', namespace, name, deleted: true, deleteBackups: args['delete-backups'] },
          format,
        );
      else
        consola.success(
          `BackupSchedule ${namespace}/${name} deleted${args['delete-backups'] ? ' with its backups' : '; its backups stay'}`,
        );
    });
  },
});
