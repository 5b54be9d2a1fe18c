#!/usr/bin/env node
// `ferry`: the command line (its commands in src/cli/commands.ts).
import { enableCompileCache } from 'node:module';
import { main } from '../cli/commands.ts';
import { runCli } from '../cli/run.ts';

enableCompileCache();

process.exitCode = await runCli(main);
