// `ferry backup get [NAME]` and `ferry restore get [NAME]`: one resource or the namespace's list, as a table or
// as the API objects (-o json|yaml).
import { defineCommand } from 'citty';
import type { ResourceKind } from '../../shared/api/types.ts';
import { listArgs } from '../resource/fetch.ts';
import { printGet } from '../resource/get.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { optionalName } from '../resource/names.ts';
import { outputArgs, outputFormat } from '../resource/output.ts';
import { columnsFor } from './columns.ts';
import { nouns, type Resource } from './kinds.ts';

export function getCommand(kind: ResourceKind) {
  return defineCommand({
    meta: { name: 'get', description: `List ${nouns[kind]}s (${kind}s), or show one` },
    args: {
      name: {
        type: 'positional',
        required: false,
        description: `the ${kind} to show (default: all in the namespace)`,
        valueHint: 'NAME',
      },
      ...kubeArgs,
      ...outputArgs,
      ...listArgs,
    },
    async run({ args }) {
      const format = outputFormat(args);
      const name = optionalName(args.name, 'NAME');
      await withKube(args, ({ kube, namespace }) =>
        printGet<Resource>(kube, {
          kind,
          namespace,
          name,
          allNamespaces: args['all-namespaces'],
          format,
          columns: (all) => columnsFor(kind, all),
        }),
      );
    },
  });
}
