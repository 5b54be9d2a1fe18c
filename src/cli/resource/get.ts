// The body of every `get [NAME]`: one named object, or the list of a namespace (of every namespace with -A), printed
// as a table of the kind's columns or as the API objects.
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import type { KindName } from '../../shared/kube/resources.ts';
import { fetchAll, fetchOne, nothingFound } from './fetch.ts';
import { printObjects, type OutputFormat } from './output.ts';
import type { Column } from './table.ts';

export interface GetRequest<T extends KubeObject> {
  kind: KindName;
  namespace: string;
  /** one object; otherwise the list */
  name?: string;
  /** -A: the list of every namespace (ignored with a name) */
  allNamespaces?: boolean;
  format: OutputFormat;
  /** the table's columns; across namespaces they usually add one naming the namespace */
  columns: (allNamespaces: boolean) => readonly Column<T>[];
}

export async function printGet<T extends KubeObject>(kube: Kube, req: GetRequest<T>): Promise<void> {
  const all = req.allNamespaces === true && req.name === undefined;
  const where = all ? undefined : req.namespace;
  const objects =
    req.name !== undefined
      ? [await fetchOne<T>(kube, req.kind, req.namespace, req.name)]
      : await fetchAll<T>(kube, req.kind, where);
  printObjects(objects, req.format, req.columns(all), {
    single: req.name !== undefined,
    empty: nothingFound(req.kind, where),
  });
}
