#!/usr/bin/env node
// `ferry`: the command line. Command groups load when named, so `ferry repo ...` (run in step pods and by hand on
// large repositories) does not pay for the Kubernetes client's modules (their memory and CPU time at start-up).
import { enableCompileCache } from 'node:module';
import { defineCommand } from 'citty';
import { lazy } from '../cli/lazy.ts';
import { runCli } from '../cli/run.ts';

enableCompileCache();

const main = defineCommand({
  meta: {
    name: 'ferry',
    version: '0.1.0',
    description: 'Back up Kubernetes volumes into restic-compatible repositories',
  },
  subCommands: {
    backup: lazy(() => import('../cli/kube/backup.ts')),
    restore: lazy(() => import('../cli/kube/restore.ts')),
    rerun: lazy(() => import('../cli/kube/rerun.ts')),
    cancel: lazy(() => import('../cli/kube/cancel.ts')),
    repo: lazy(() => import('../cli/repo/index.ts')),
    location: lazy(() => import('../cli/location/index.ts')),
    install: lazy(() => import('../cli/install/install.ts')),
    doctor: lazy(() => import('../cli/doctor/doctor.ts')),
    schedule: lazy(() => import('../cli/schedule/index.ts')),
    copy: lazy(() => import('../cli/copy/copy.ts')),
    copies: lazy(() => import('../cli/copy/copies.ts')),
    'copy-policy': lazy(() => import('../cli/copy/policies.ts')),
  },
});

process.exitCode = await runCli(main);
