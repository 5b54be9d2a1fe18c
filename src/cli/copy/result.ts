// What `ferry copy` and `ferry copies wait` print: the object as a document (-o json|yaml), a table row (-o wide),
// or one line saying what happened.
import { consola } from '../console.ts';
import { formatBytes } from '../output.ts';
import { isDocument, printObjects, type OutputFormat } from '../resource/output.ts';
import { between } from '../resource/time.ts';
import { copyColumns, type StoredCopy } from './columns.ts';

export function copyOutcome(c: StoredCopy): string {
  const st = c.status?.stats;
  const snapshot = c.status?.snapshotID
    ? `snapshot ${c.status.snapshotID.slice(0, 8)} in ${c.spec.backupStorageLocation}, `
    : '';
  const sent = st ? `${formatBytes(st.bytesSent)} sent (${st.blobs} new blobs), ` : '';
  return `copy ${c.metadata.name} ${c.status?.phase}: ${snapshot}${sent}took ${between(c.metadata.creationTimestamp, c.status?.completionTimestamp)}`;
}

export function printCopy(c: StoredCopy, format: OutputFormat, waited: boolean): void {
  if (isDocument(format) || format === 'wide') {
    printObjects([c], format, copyColumns(false), { single: true });
    return;
  }
  consola.success(waited ? copyOutcome(c) : `datacopy/${c.metadata.name} created in namespace ${c.metadata.namespace}`);
}
