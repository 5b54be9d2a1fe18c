// Paths of the real peers for tests, built from their pinned Go modules on first use (see test/tools/).

import { tools } from '../tools/catalog.ts';
import type { ToolName } from '../tools/catalog.ts';
import { installTool } from '../tools/go-install.ts';

export type { ToolName };

/** The binary of a pinned tool; the first call on a fresh machine builds it, which can take minutes. */
export async function toolPath(name: ToolName): Promise<string> {
  return (await installTool(tools[name])).path;
}
