// Where every thread of ours starts (see thread.ts). A thread does not inherit the main thread's compile cache, so
// it turns the cache on before its module loads: the modules are then read from the cache rather than compiled
// again in every thread. Plain JavaScript: a TypeScript entry would make Node load its type stripper in every thread
// before the cache is on (a WebAssembly module, CPU time and memory in every thread), where from the cache nothing
// needs stripping.
import { enableCompileCache, flushCompileCache } from 'node:module';

enableCompileCache();
// the module the thread runs, as thread.ts passes it
await import(process.argv[2]);
// A thread's cache entries reach the disk only when it flushes them: on its own a thread stopped by terminate()
// never does, so the modules only threads load (the backup worker's) were stripped and compiled again on every run.
flushCompileCache();
