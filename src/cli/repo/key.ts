import { readFile } from 'node:fs/promises';
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { printJSON } from '../output.ts';
import { UsageError } from '../run.ts';
import { addKey } from '../../engine/operations/key.ts';
import { openRepo, repoArgs } from './options.ts';
import { lockArgs, locking } from './locking.ts';
import { short } from './common.ts';

const add = defineCommand({
  meta: { name: 'add', description: 'Add a password that opens the repository (the existing ones keep working)' },
  args: {
    ...repoArgs,
    ...lockArgs,
    'new-password-file': {
      type: 'string',
      description: 'file holding the new password',
      required: true,
      valueHint: 'FILE',
    },
  },
  async run({ args }) {
    let text: string;
    try {
      text = await readFile(args['new-password-file'], 'utf8');
    } catch (err) {
      throw new UsageError(
        `cannot read --new-password-file ${args['new-password-file']}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    const password = text.split(/\r?\n/)[0];
    if (password === '') throw new UsageError('the new password is empty');
    const lock = locking(args);
    const repo = await openRepo(args);
    const id = await addKey(repo, password, lock);
    if (args.json) printJSON({ message_type: 'key_added', id });
    else consola.success(`added key ${short(id)}`);
    await repo.close();
  },
});

export default defineCommand({
  meta: { name: 'key', description: 'Manage the passwords (key files) of a repository' },
  subCommands: { add },
});
