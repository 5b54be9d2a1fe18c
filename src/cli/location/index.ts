import { defineCommand } from 'citty';
import create from './create.ts';
import del from './delete.ts';
import describe from './describe.ts';
import get from './get.ts';
import backups from './backups.ts';

export default defineCommand({
  meta: {
    name: 'location',
    description: "BackupStorageLocations: the S3 buckets ferry backs up into (in ferry's namespace)",
  },
  subCommands: { create, get, describe, delete: del, backups },
});
