#!/usr/bin/env node
// The `ferry` command. Plain JavaScript on purpose: a TypeScript entry makes Node load its type stripper (a
// WebAssembly module, about 0.05 s and 17 MiB) before anything can turn the compile cache on; with the cache on
// first, the TypeScript modules come out of the cache and nothing needs stripping.
import { enableCompileCache } from 'node:module';

// glibc's malloc raises its mmap threshold to the size of each large block freed (up to 32 MiB), after which
// buffers of megabytes (pack reads, index files) come from the heap, where the small allocations made between them
// split the holes they leave and the heap only grows: restoring a million files of 100 bytes peaked at 259 MiB, and
// 224 MiB with the threshold fixed at 4 MiB. And each thread that allocates gets an arena of its own (up to eight
// per core), keeping what it frees: two arenas in all put a backup of a million files at 238 MiB against 245 (means
// of four runs) at the same speed. And what malloc maps is marked for transparent huge pages (where the kernel
// leaves them to madvise, as many distributions do): a pack read then faults in 2 MiB at a time rather than 4 KiB,
// which on a VM whose fresh pages are dear took a restore of 1.5 GB of large files from 4.7-5.2 to 4.4 s and its
// page faults from 400-500k to 65-70k, at the same peak memory (glibc 2.35 and later; older ones ignore it). malloc
// reads its tunables once, at start, so the command starts itself again with them set, keeping any the caller chose
// (the image sets them for every process; other C libraries ignore them).
const defaults = [['glibc.malloc.mmap_threshold', '4194304'], ['glibc.malloc.arena_max', '2'], ['glibc.malloc.hugetlb', '1']];
const chosen = process.env.GLIBC_TUNABLES ?? '';
const missing = defaults.filter(([name]) => !chosen.includes(name));
if (process.platform === 'linux' && missing.length > 0) {
  const tunables = [chosen, ...missing.map(([name, value]) => `${name}=${value}`)].filter(Boolean).join(':');
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, GLIBC_TUNABLES: tunables });
}
enableCompileCache();
await import('./cli.ts');
