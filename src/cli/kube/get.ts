// `ferry backup get [NAME]` and `ferry restore get [NAME]`: one resource or the namespace's list, as a table or
// as the API objects (-o json|yaml).
import type { ResourceKind } from '../../shared/api/types.ts';
import { getCommand as listingCommand } from '../resource/get-command.ts';
import { columnsFor } from './columns.ts';
import { nouns, type Resource } from './kinds.ts';

export function getCommand(kind: ResourceKind) {
  return listingCommand<Resource>({
    kind,
    description: `List ${nouns[kind]}s (${kind}s), or show one`,
    nameDescription: `the ${kind} to show (default: all in the namespace)`,
    columns: (all) => columnsFor(kind, all),
  });
}
