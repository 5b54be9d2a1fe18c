// What `create` prints: the object as a document (-o json|yaml), a table row (-o wide), or a line saying what
// happened, with the outcome in one sentence after --wait.
import { consola } from '../console.ts';
import { formatBytes } from '../output.ts';
import { isDocument, printObjects, type OutputFormat } from '../resource/output.ts';
import { between } from '../resource/time.ts';
import { columnsFor } from './columns.ts';
import { nouns, type Resource } from './kinds.ts';

function outcome(r: Resource): string {
  const st = r.status?.stats;
  const snapshot = r.status?.snapshotID?.slice(0, 8);
  // a restore adds nothing to the repository: it says what it wrote, in a restore's words
  const sizes =
    r.kind === 'DataUpload'
      ? `${snapshot ? `snapshot ${snapshot}, ` : ''}${st ? `${formatBytes(st.bytes)} in ${st.files} files, ${formatBytes(st.bytesAdded)} added, ` : ''}`
      : st
        ? `restored ${formatBytes(st.bytes)} in ${st.files} files${snapshot ? ` from snapshot ${snapshot}` : ''}, `
        : '';
  return `${nouns[r.kind]} ${r.metadata.name} ${r.status?.phase}: ${sizes}took ${between(r.metadata.creationTimestamp, r.status?.completionTimestamp)}`;
}

export function printCreated(r: Resource, format: OutputFormat, waited: boolean): void {
  if (isDocument(format) || format === 'wide') {
    printObjects([r], format, columnsFor(r.kind, false), { single: true });
    return;
  }
  consola.success(
    waited ? outcome(r) : `${r.kind.toLowerCase()}/${r.metadata.name} created in namespace ${r.metadata.namespace}`,
  );
}
