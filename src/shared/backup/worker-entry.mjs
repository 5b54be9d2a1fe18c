// Where a backup worker thread starts. A worker does not inherit the main thread's compile cache, so it turns the
// cache on before its modules load: they are then read from the cache rather than compiled again in every thread.
// Plain JavaScript: a TypeScript entry would make Node load its type stripper in every thread before the cache is
// on (a WebAssembly module: 40-50 ms of CPU and 15 MiB per thread), where from the cache nothing needs stripping.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./worker.ts');
