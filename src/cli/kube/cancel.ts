// `ferry cancel KIND/NAME`: sets spec.cancel; the dispatcher moves the resource to Canceling and finalize cleans
// up. With --wait the command returns once it is Canceled (exit 0), or fails if it ended otherwise first.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { canCancel } from '../../shared/api/phases.ts';
import { fetchOne } from '../resource/fetch.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { kindAndName } from '../resource/names.ts';
import { CanceledError } from '../run.ts';
import { kindAliases, refOf, type Resource } from './kinds.ts';
import { waitForEnd } from './wait.ts';

export default defineCommand({
  meta: {
    name: 'cancel',
    description: 'Cancel a backup or restore: KIND/NAME, e.g. backup/nightly or datadownload/copy',
  },
  args: {
    target: {
      type: 'positional',
      required: false,
      description: 'what to cancel: dataupload/NAME (backup/NAME) or datadownload/NAME (restore/NAME)',
      valueHint: 'KIND/NAME',
    },
    wait: { type: 'boolean', description: 'wait until it is Canceled', default: false },
    ...kubeArgs,
  },
  async run({ args }) {
    const { kind, name } = kindAndName(args.target, kindAliases);
    await withKube(args, async ({ kube, namespace }) => {
      const r = await fetchOne<Resource>(kube, kind, namespace, name);
      const phase = r.status?.phase ?? 'New';
      if (!canCancel(phase) && phase !== 'Canceling')
        throw new Error(`${refOf(r)} is ${phase}; only a backup or restore still running can be canceled.`);
      if (r.spec.cancel !== true) await kube.patch({ kind, namespace, name }, { spec: { cancel: true } });
      if (!args.wait) {
        consola.success(`${refOf(r)}: cancel requested`);
        return;
      }
      try {
        const ended = await waitForEnd(kube, kind, namespace, name, { quiet: false });
        throw new Error(`${refOf(r)} ended ${ended.status?.phase} before the cancel took effect.`);
      } catch (err) {
        if (!(err instanceof CanceledError)) throw err;
        // its message says what the canceled work left behind (data kept for the next backup, a volume removed)
        consola.success(`${refOf(r)} canceled${err.message.replace(/^.*? was canceled/s, '')}`);
      }
    });
  },
});
