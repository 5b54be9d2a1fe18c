import { defineCommand } from 'citty';
import init from './init.ts';
import backup from './backup.ts';
import restore from './restore.ts';
import snapshots from './snapshots.ts';
import check from './check.ts';
import forget from './forget.ts';
import prune from './prune.ts';
import key from './key.ts';
import unlock from './unlock.ts';

export default defineCommand({
  meta: { name: 'repo', description: 'Work with a repository directly (restic format v2), without Kubernetes' },
  subCommands: { init, backup, restore, snapshots, check, forget, prune, key, unlock },
});
