// `ferry copies get|describe|wait`: DataCopies, each a backup copied into another location (made by a CopyPolicy
// or by `ferry copy`).
import { defineCommand } from 'citty';
import { fetchOne } from '../resource/fetch.ts';
import { eventsAbout } from '../resource/events.ts';
import { getCommand } from '../resource/get-command.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import { waitForEnd } from '../kube/wait.ts';
import { copyColumns, type StoredCopy } from './columns.ts';
import { describeCopy } from './describe.ts';
import { printCopy } from './result.ts';

const oneArgs = {
  name: { type: 'positional', required: true, description: 'the DataCopy', valueHint: 'NAME' },
  ...kubeArgs,
  ...outputArgs,
} as const;

const get = getCommand<StoredCopy>({
  kind: 'DataCopy',
  description: 'List copies of backups (DataCopies), or show one',
  nameDescription: 'the DataCopy to show (default: all in the namespace)',
  columns: copyColumns,
});

const describe = defineCommand({
  meta: {
    name: 'describe',
    description: 'Show a copy in detail: what it copies where, attempts, what it sent, events',
  },
  args: oneArgs,
  async run({ args }) {
    const format = outputFormat(args);
    const name = objectName(args.name, 'NAME');
    await withKube(args, async ({ kube, namespace }) => {
      const copy = await fetchOne<StoredCopy>(kube, 'DataCopy', namespace, name);
      const events = await eventsAbout(kube, copy);
      if (isDocument(format)) printDocument({ dataCopy: copy, events }, format);
      else process.stdout.write(describeCopy(copy, events));
    });
  },
});

const wait = defineCommand({
  meta: { name: 'wait', description: 'Follow a copy until it ends (exit 0 Completed, 1 Failed, 3 Canceled)' },
  args: oneArgs,
  async run({ args }) {
    const format = outputFormat(args);
    const name = objectName(args.name, 'NAME');
    await withKube(args, async ({ kube, namespace }) => {
      const copy = await waitForEnd(kube, 'DataCopy', namespace, name, { quiet: isDocument(format) });
      printCopy(copy, format, true);
    });
  },
});

export default defineCommand({
  meta: { name: 'copies', description: 'Copies of backups in other locations (DataCopies)' },
  subCommands: { get, describe, wait },
});
