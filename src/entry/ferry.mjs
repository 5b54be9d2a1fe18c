#!/usr/bin/env node
// The `ferry` command. Plain JavaScript on purpose: a TypeScript entry makes Node load its type stripper (a
// WebAssembly module, about 0.05 s and 17 MiB) before anything can turn the compile cache on; with the cache on
// first, the TypeScript modules come out of the cache and nothing needs stripping.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./cli.ts');
