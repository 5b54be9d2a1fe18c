// `npm run tools`: builds every pinned peer the tests use into the cache (skipping those already there) and prints
// versions. `npm run tools -- kopia` builds the named tools instead (bench-only and box-only peers are built only when named).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tools } from './catalog.ts';
import type { ToolName, ToolSpec } from './catalog.ts';
import { installTool, toolVersion } from './go-install.ts';

const run = promisify(execFile);

async function reportedVersion(spec: ToolSpec, path: string): Promise<string> {
  const { stdout } = await run(path, spec.versionArgs);
  return stdout.trim().split('\n')[0] ?? '';
}

function chosen(names: string[]): ToolSpec[] {
  if (names.length === 0) return Object.values(tools).filter((spec) => !spec.benchOnly && !spec.boxOnly);
  return names.map((name) => {
    if (!Object.hasOwn(tools, name))
      throw new Error(`Unknown tool "${name}": choose from ${Object.keys(tools).join(', ')}.`);
    return tools[name as ToolName];
  });
}

async function main(): Promise<void> {
  // one at a time: each Go build already uses every core
  for (const spec of chosen(process.argv.slice(2))) {
    const version = toolVersion(spec);
    console.log(`${spec.name} ${version}: checking cache`);
    const result = await installTool(spec, true);
    const how = result.built ? `built in ${result.seconds.toFixed(1)} s` : 'cached';
    console.log(`${spec.name} ${version}: ${how} -> ${result.path}`);
    console.log(`  ${await reportedVersion(spec, result.path)}`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
