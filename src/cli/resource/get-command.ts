// `ferry <noun> get [NAME]` for every kind the CLI lists: NAME, the cluster flags, -o, and for namespaced kinds -n
// and -A; kinds kept in ferry's own namespace (locations, copy policies) take --ferry-namespace instead.
import { defineCommand, type ArgsDef } from 'citty';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { KindName } from '../../shared/kube/resources.ts';
import { locationKubeArgs } from '../location/flags.ts';
import { listArgs } from './fetch.ts';
import { printGet } from './get.ts';
import { kubeArgs, withKube, type KubeFlags } from './kube.ts';
import { optionalName } from './names.ts';
import { outputArgs, outputFormat } from './output.ts';
import type { Column } from './table.ts';

export interface GetCommandSpec<T> {
  kind: KindName;
  /** the command's description, e.g. "List the backup schedules, or show one" */
  description: string;
  /** NAME's description, e.g. "the schedule to show (default: all in the namespace)" */
  nameDescription: string;
  /** the objects live in ferry's namespace */
  inFerryNamespace?: boolean;
  columns: (allNamespaces: boolean) => readonly Column<T>[];
}

export function getCommand<T extends KubeObject>(spec: GetCommandSpec<T>) {
  const cluster: ArgsDef = spec.inFerryNamespace ? locationKubeArgs : kubeArgs;
  const listing: ArgsDef = spec.inFerryNamespace ? {} : listArgs;
  return defineCommand({
    meta: { name: 'get', description: spec.description },
    args: {
      name: { type: 'positional', required: false, description: spec.nameDescription, valueHint: 'NAME' },
      ...cluster,
      ...outputArgs,
      ...listing,
    },
    async run({ args }) {
      const flags = args as KubeFlags & { name?: unknown; output?: string; 'all-namespaces'?: boolean };
      const format = outputFormat(flags);
      const name = optionalName(flags.name, 'NAME');
      await withKube(flags, ({ kube, namespace, ferryNamespace }) =>
        printGet<T>(kube, {
          kind: spec.kind,
          namespace: spec.inFerryNamespace ? ferryNamespace : namespace,
          name,
          allNamespaces: flags['all-namespaces'],
          format,
          columns: spec.columns,
        }),
      );
    },
  });
}
