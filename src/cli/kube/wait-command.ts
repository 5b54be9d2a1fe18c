// `ferry backup wait NAME` and `ferry restore wait NAME`: follow one already running (after Ctrl-C ended a
// `create --wait`, or one made by a schedule or kubectl) to its end, with the exit codes of `create --wait`.
import { defineCommand } from 'citty';
import type { ResourceKind } from '../../shared/api/types.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat } from '../resource/output.ts';
import { showOneArgs, nouns } from './kinds.ts';
import { printCreated } from './result.ts';
import { waitForEnd } from './wait.ts';

export function waitCommand(kind: ResourceKind) {
  return defineCommand({
    meta: {
      name: 'wait',
      description: `Follow a ${nouns[kind]} (${kind}) until it ends (exit 0 Completed, 1 Failed, 3 Canceled)`,
    },
    args: showOneArgs(kind),
    async run({ args }) {
      const format = outputFormat(args);
      const name = objectName(args.name, 'NAME');
      await withKube(args, async ({ kube, namespace }) => {
        const r = await waitForEnd(kube, kind, namespace, name, { quiet: isDocument(format) });
        printCreated(r, format, true);
      });
    },
  });
}
