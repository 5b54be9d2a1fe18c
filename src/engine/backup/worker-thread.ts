// A backup pool's worker thread: its worker serves the thread's own port.
import { parentPort } from 'node:worker_threads';
import { serve } from './worker.ts';

serve(parentPort!);
