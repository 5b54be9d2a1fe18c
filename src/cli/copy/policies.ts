// `ferry copy-policy get|describe`: the CopyPolicies in ferry's namespace, which copy the backups of one location
// into another as they complete (written by the cluster's administrator, e.g. with kubectl apply).
import { defineCommand } from 'citty';
import { fetchAll, fetchOne } from '../resource/fetch.ts';
import { eventsAbout } from '../resource/events.ts';
import { getCommand } from '../resource/get-command.ts';
import { withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import { locationKubeArgs } from '../location/flags.ts';
import { policyColumns, type StoredCopy, type StoredPolicy } from './columns.ts';
import { describePolicy } from './describe.ts';

const get = getCommand<StoredPolicy>({
  kind: 'CopyPolicy',
  description: 'List the copy policies, or show one',
  nameDescription: 'the policy (default: all)',
  inFerryNamespace: true,
  columns: () => policyColumns,
});

const describe = defineCommand({
  meta: { name: 'describe', description: 'Show a copy policy in detail: what it copies, its copies, conditions' },
  args: {
    name: { type: 'positional', required: true, description: 'the policy', valueHint: 'NAME' },
    ...locationKubeArgs,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const name = objectName(args.name, 'NAME');
    await withKube(args, async ({ kube, ferryNamespace }) => {
      const policy = await fetchOne<StoredPolicy>(kube, 'CopyPolicy', ferryNamespace, name);
      const copies = (await fetchAll<StoredCopy>(kube, 'DataCopy', undefined)).filter((c) => c.spec.policy === name);
      const events = await eventsAbout(kube, policy);
      if (isDocument(format))
        printDocument(
          { copyPolicy: policy, dataCopies: copies.map((c) => `${c.metadata.namespace}/${c.metadata.name}`), events },
          format,
        );
      else process.stdout.write(describePolicy(policy, copies, events));
    });
  },
});

export default defineCommand({
  meta: {
    name: 'copy-policy',
    description: "Copy policies: backups of one location copied into another (in ferry's namespace)",
  },
  subCommands: { get, describe },
});
