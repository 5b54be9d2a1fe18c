// `ferry backup delete NAME` and `ferry restore delete NAME`. Deleting a DataUpload also frees its data in the
// repository: its delete step runs behind a finalizer, so with --wait the command returns once that is done.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import type { ResourceKind } from '../../shared/api/types.ts';
import { sleep } from '../../engine/concurrency/sleep.ts';
import type { Kube } from '../../shared/kube/kube.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { nouns } from './kinds.ts';

async function waitGone(kube: Kube, kind: ResourceKind, namespace: string, name: string): Promise<void> {
  while (await kube.get({ kind, namespace, name })) await sleep(1000);
}

export function deleteCommand(kind: ResourceKind) {
  const extra = kind === 'DataUpload' ? ' and free its data in the repository' : '';
  return defineCommand({
    meta: { name: 'delete', description: `Delete a ${nouns[kind]} (${kind})${extra}` },
    args: {
      name: { type: 'positional', required: false, description: `the ${kind}`, valueHint: 'NAME' },
      wait: {
        type: 'boolean',
        description: `wait until it is gone${extra ? ' (its repository data freed)' : ''}`,
        default: false,
      },
      ...kubeArgs,
    },
    async run({ args }) {
      const name = objectName(args.name, 'NAME');
      await withKube(args, async ({ kube, namespace }) => {
        if (!(await kube.delete({ kind, namespace, name })))
          throw new Error(`${kind} "${name}" not found in namespace ${namespace}.`);
        if (args.wait) await waitGone(kube, kind, namespace, name);
        consola.success(`${kind.toLowerCase()}/${name} ${args.wait ? 'deleted' : 'is being deleted'}`);
      });
    },
  });
}
