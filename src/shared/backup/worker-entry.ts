// Where a backup worker thread starts. A worker does not inherit the main thread's compile cache, so it turns the
// cache on before its modules load: they are then read from the cache rather than compiled again in every thread.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./worker.ts');
