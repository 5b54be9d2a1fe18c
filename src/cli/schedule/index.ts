import { defineCommand } from 'citty';
import create from './create.ts';
import del from './delete.ts';
import describe from './describe.ts';
import get from './get.ts';
import { resume, suspend } from './suspend.ts';

export default defineCommand({
  meta: { name: 'schedule', description: 'Backups on a cron schedule, with expiry and retention (BackupSchedules)' },
  subCommands: { create, get, describe, suspend, resume, delete: del },
});
