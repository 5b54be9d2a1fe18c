// A thread for thread.test.ts: answers each message with its own thread id and whether the compile cache is on.
import { getCompileCacheDir } from 'node:module';
import { parentPort, threadId } from 'node:worker_threads';

parentPort!.on('message', (msg: unknown) =>
  parentPort!.postMessage({ threadId, msg, cache: getCompileCacheDir() !== undefined }),
);
