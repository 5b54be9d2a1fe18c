// Starts a worker thread on one of our TypeScript modules through a plain JavaScript entry (thread-entry.mjs), so
// the thread reads its modules from the compile cache instead of loading the type stripper and compiling them again.
import { Worker, type WorkerOptions } from 'node:worker_threads';

const entry = new URL('./thread-entry.mjs', import.meta.url);

export function startThread(module: URL, options: Omit<WorkerOptions, 'argv'>): Worker {
  return new Worker(entry, { ...options, argv: [module.href] });
}
