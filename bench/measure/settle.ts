// Writes out what earlier operations left in the page cache before the next one is timed. Linux writes dirty pages
// back 30 s after they were written (or sooner, past 10% of memory), so without this whichever operation runs half a
// minute after a full backup shares the disk with the writing of that backup's repository, and a tool's figures
// would depend on how long its previous command took. An operation still pays for the writing it causes itself.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export async function settle(): Promise<void> {
  await promisify(execFile)('sync');
}
