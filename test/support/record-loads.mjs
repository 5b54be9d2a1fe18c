// Loaded with `node --import`: appends the URL of every module the process loads to the file named by
// FERRY_TEST_LOADS, so a test can tell what a command paid for at start-up.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

registerHooks({
  load(url, context, next) {
    appendFileSync(process.env.FERRY_TEST_LOADS, `${url}\n`);
    return next(url, context);
  },
});
