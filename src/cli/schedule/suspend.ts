// `ferry schedule suspend|resume NAME`: sets spec.suspend; runs already started go on.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { isDocument, printDocument } from '../resource/output.ts';
import type { Schedule } from './create.ts';
import { oneScheduleArgs, withSchedule } from './one.ts';

function suspendCommand(suspend: boolean) {
  const verb = suspend ? 'suspend' : 'resume';
  return defineCommand({
    meta: {
      name: verb,
      description: suspend
        ? 'Stop a schedule from starting runs (running ones go on)'
        : 'Let a suspended schedule start runs again',
    },
    args: oneScheduleArgs,
    async run({ args }) {
      await withSchedule(args, async ({ kube, namespace, schedule, format }) => {
        const name = schedule.metadata.name;
        const updated = await kube.patch<Schedule>({ kind: 'BackupSchedule', namespace, name }, { spec: { suspend } });
        if (isDocument(format)) printDocument(updated, format);
        else consola.success(`BackupSchedule ${namespace}/${name} ${suspend ? 'suspended' : 'resumed'}`);
      });
    },
  });
}

export const suspend = suspendCommand(true);
export const resume = suspendCommand(false);
