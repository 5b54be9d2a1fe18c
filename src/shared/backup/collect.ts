// The data path allocates a few short-lived megabyte buffers per chunk (compressed, sealed, read-back copies).
// V8 frees such off-heap memory only when a collection runs, and a thread whose JS heap stays small collects
// rarely, so without help the process keeps hundreds of megabytes of garbage. Collecting after every few tens of
// megabytes processed keeps peak memory flat for a few milliseconds of CPU.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

const everyBytes = 32 << 20;
let since = 0;

export function allocated(bytes: number): void {
  since += bytes;
  if (since >= everyBytes) {
    since = 0;
    // the buffers die young, so a scavenge frees them; a full collection would cost far more
    gc({ type: 'minor' });
  }
}
