// What the commands acting on one named schedule share: its flags, and reading it (its absence is an error naming it).
import type { ArgsDef } from 'citty';
import type { Kube } from '../../shared/kube/kube.ts';
import { fetchOne } from '../resource/fetch.ts';
import { kubeArgs, withKube, type KubeFlags } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { outputArgs, outputFormat, type OutputFormat } from '../resource/output.ts';
import type { Schedule } from './create.ts';

export const oneScheduleArgs = {
  name: { type: 'positional', required: true, description: 'the schedule', valueHint: 'NAME' },
  ...kubeArgs,
  ...outputArgs,
} as const satisfies ArgsDef;

export interface OneSchedule {
  kube: Kube;
  namespace: string;
  schedule: Schedule;
  format: OutputFormat;
}

/** Checks the flags, reads the schedule, and runs `work` on it. */
export async function withSchedule(
  args: KubeFlags & { name?: unknown; output?: string },
  work: (s: OneSchedule) => Promise<void>,
): Promise<void> {
  const format = outputFormat(args);
  const name = objectName(args.name, 'NAME');
  await withKube(args, async ({ kube, namespace }) => {
    const schedule = await fetchOne<Schedule>(kube, 'BackupSchedule', namespace, name);
    await work({ kube, namespace, schedule, format });
  });
}
