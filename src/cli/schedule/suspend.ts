// `ferry schedule suspend|resume NAME`: sets spec.suspend; runs already started go on.
import { defineCommand } from 'citty';
import { consola } from 'consola';
import { fetchOne } from '../resource/fetch.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import type { Schedule } from './create.ts';

function suspendCommand(suspend: boolean) {
  const verb = suspend ? 'suspend' : 'resume';
  return defineCommand({
    meta: { name: verb, description: suspend ? 'Stop a schedule from starting runs (running ones go on)' : 'Let a suspended schedule start runs again' },
    args: {
      name: { type: 'positional', required: true, description: 'the schedule', valueHint: 'NAME' },
      ...kubeArgs,
      ...outputArgs,
    },
    async run({ args }) {
      const format = outputFormat(args);
      const name = objectName(args.name, 'NAME');
      await withKube(args, async ({ kube, namespace }) => {
        await fetchOne<Schedule>(kube, 'BackupSchedule', namespace, name);
        const updated = await kube.patch<Schedule>({ kind: 'BackupSchedule', namespace, name }, { spec: { suspend } });
        if (isDocument(format)) printDocument(updated, format);
        else consola.success(`BackupSchedule ${namespace}/${name} ${suspend ? 'suspended' : 'resumed'}`);
      });
    },
  });
}

export const suspend = suspendCommand(true);
export const resume = suspendCommand(false);
