// Runs the real `ferry` command line with one deterministic crash point: FERRY_TEST_KILL="TYPE:N:WHEN" makes the
// process SIGKILL itself at the N-th save of a TYPE file (pack, index, snapshot, lock), on the filesystem backend or
// the S3 backend:
//   before  the save starts (nothing of that file exists)
//   during  (filesystem only) half the file is in its temporary name beside the target, as a crash mid-write leaves it
//   after   the file is complete and in place, before anything that follows it (index entries, the snapshot)
//   pause   the file is complete and in place; the process creates FERRY_TEST_PAUSE_MARK and waits, so the test
//           can SIGKILL it from outside at a moment it chooses, however fast the machine is
// Only for fault tests; the CLI itself carries no test hooks.
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { S3Backend } from '../../src/engine/backend/s3.ts';
import { objectPath } from '../../src/engine/backend/backend.ts';
import type { Backend, Handle } from '../../src/engine/backend/backend.ts';

const spec = process.env.FERRY_TEST_KILL ?? '';
const m = /^(pack|index|snapshot|lock):(\d+):(before|during|after|pause)$/.exec(spec);
if (!m) throw new Error(`FERRY_TEST_KILL "${spec}" must look like pack:3:during`);
const [, type, nth, when] = m;
let seen = 0;

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL did not stop the process');
}

type Save = Backend['save'];

function killing(save: Save): Save {
  return async function (this: Backend, h: Handle, data: Uint8Array, signal?: AbortSignal, sha256?: string) {
    if (h.type !== type || ++seen !== Number(nth)) return save.call(this, h, data, signal, sha256);
    if (when === 'before') die();
    if (when === 'during') {
      if (!(this instanceof FsBackend)) throw new Error('FERRY_TEST_KILL ...:during works on a filesystem backend');
      const file = await open(`${join(this.location, objectPath(h))}-tmp-killeddriver`, 'wx', 0o600);
      await file.write(data.subarray(0, data.length >> 1));
      await file.sync();
      die();
    }
    await save.call(this, h, data, signal, sha256);
    if (when === 'pause') {
      await writeFile(process.env.FERRY_TEST_PAUSE_MARK ?? '', '');
      // other uploads already under way go on; this one never returns, so the run stalls here until killed.
      // The timer keeps Node from exiting when nothing else is pending (a pause at the lock, before any data moves).
      setInterval(() => undefined, 1000);
      await new Promise<never>(() => undefined);
    }
    die();
  };
}

FsBackend.prototype.save = killing(FsBackend.prototype.save);
S3Backend.prototype.save = killing(S3Backend.prototype.save);

await import('../../src/entry/cli.ts');
