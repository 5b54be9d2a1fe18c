// `backup create --tag key=value`, repeatable: spec.tags, recorded on the repository snapshot. Checked here as the
// CRD checks them, so a bad one is bad usage naming the flag.
import { repeated } from '../repo/common.ts';
import { UsageError } from '../run.ts';

const maxTags = 32;

export function tagsFlag(rawArgs: readonly string[]): Record<string, string> | undefined {
  const given = repeated(rawArgs, 'tag');
  if (given.length === 0) return undefined;
  const tags: Record<string, string> = {};
  for (const tag of given) {
    const eq = tag.indexOf('=');
    const key = tag.slice(0, eq);
    const value = tag.slice(eq + 1);
    if (eq <= 0 || value.includes(',') || value.includes('\n') || value.length > 256)
      throw new UsageError(
        `--tag "${tag}" is not key=value (a key, then a value of at most 256 characters without commas or line breaks)`,
      );
    if (key in tags) throw new UsageError(`--tag ${key} is given twice`);
    tags[key] = value;
  }
  if (Object.keys(tags).length > maxTags) throw new UsageError(`--tag: at most ${maxTags} tags`);
  return tags;
}
