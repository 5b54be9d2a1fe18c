#!/usr/bin/env node
// `ferry`: the command line.
import { defineCommand } from 'citty';
import backup from '../cli/kube/backup.ts';
import cancel from '../cli/kube/cancel.ts';
import rerun from '../cli/kube/rerun.ts';
import restore from '../cli/kube/restore.ts';
import location from '../cli/location/index.ts';
import repo from '../cli/repo/index.ts';
import install from '../cli/install/install.ts';
import doctor from '../cli/doctor/doctor.ts';
import schedule from '../cli/schedule/index.ts';
import { runCli } from '../cli/run.ts';

const main = defineCommand({
  meta: { name: 'ferry', version: '0.1.0', description: 'Back up Kubernetes volumes into restic-compatible repositories' },
  subCommands: { backup, restore, rerun, cancel, repo, location, install, doctor, schedule },
});

process.exitCode = await runCli(main);
