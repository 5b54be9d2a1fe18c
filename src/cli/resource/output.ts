// `-o json|yaml|wide` for every command that prints resources: the objects as the API has them (a List when
// there are several), or a table of chosen columns.
import type { ArgsDef } from 'citty';
import { toYaml } from '../../shared/api/yaml.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { printJSON } from '../output.ts';
import { UsageError } from '../run.ts';
import { tableOf, type Column } from './table.ts';

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml';

export const outputArgs = {
  output: {
    type: 'string',
    alias: 'o',
    description: 'output format: json, yaml or wide (default: a table)',
    valueHint: 'FORMAT',
  },
} as const satisfies ArgsDef;

const formats: readonly string[] = ['json', 'yaml', 'wide'];

/** The format -o asks for; bad usage for anything else. */
export function outputFormat(flags: { output?: string }): OutputFormat {
  const o = flags.output;
  if (o === undefined || o === '') return 'table';
  if (!formats.includes(o)) throw new UsageError(`-o ${o} is not an output format; use json, yaml or wide`);
  return o as OutputFormat;
}

/** Whether the format is for scripts: the document alone on stdout, no human lines. */
export function isDocument(format: OutputFormat): format is 'json' | 'yaml' {
  return format === 'json' || format === 'yaml';
}

export function printDocument(value: unknown, format: 'json' | 'yaml'): void {
  if (format === 'json') printJSON(value);
  else process.stdout.write(toYaml(JSON.parse(JSON.stringify(value)) as Record<string, unknown>));
}

/** One object as itself, several (or a listing) as a v1 List, as `kubectl get -o` prints them. */
export function asDocument(objects: readonly KubeObject[], single: boolean): unknown {
  return single && objects.length === 1 ? objects[0] : { apiVersion: 'v1', kind: 'List', items: objects, metadata: {} };
}

/**
 * Prints what `get` found: a document for json/yaml, else a table (wide columns with -o wide). `single` says the
 * user named one object, so it is printed as itself rather than in a List; `empty` is said when there is nothing.
 */
export function printObjects<T extends KubeObject>(
  objects: readonly T[],
  format: OutputFormat,
  columns: readonly Column<T>[],
  opts: { single?: boolean; empty?: string } = {},
): void {
  if (isDocument(format)) {
    printDocument(asDocument(objects, opts.single === true), format);
    return;
  }
  // like kubectl: an empty listing says so on stderr, so a script reading stdout sees nothing
  if (objects.length === 0) process.stderr.write(`${opts.empty ?? 'No resources found.'}\n`);
  else process.stdout.write(tableOf(columns, objects, format === 'wide'));
}
