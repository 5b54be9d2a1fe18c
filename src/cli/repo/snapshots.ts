import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { formatGoTime, localTime, snapshots } from '../../engine/operations/snapshots.ts';
import { formatBytes, printJSON } from '../output.ts';
import { openRepo, repoArgs } from './options.ts';
import { short } from './common.ts';
import { lockArgs, locking } from './locking.ts';

export default defineCommand({
  meta: { name: 'snapshots', description: 'List the snapshots in the repository, oldest first' },
  args: { ...repoArgs, ...lockArgs },
  async run({ args }) {
    const lock = locking(args);
    const repo = await openRepo(args);
    const entries = await snapshots(repo, lock);
    if (args.json) {
      printJSON(
        entries.map((e) => ({
          id: e.id,
          short_id: short(e.id),
          time: formatGoTime(e.snapshot.time),
          tree: e.snapshot.tree,
          parent: e.snapshot.parent,
          paths: e.snapshot.paths,
          hostname: e.snapshot.hostname,
          tags: e.snapshot.tags,
          total_bytes_processed: e.snapshot.summary?.totalBytesProcessed,
        })),
      );
    } else if (entries.length === 0) {
      consola.info('no snapshots');
    } else {
      const rows = entries.map((e) => [
        short(e.id),
        formatGoTime(localTime(e.snapshot.time.ns)).slice(0, 19).replace('T', ' '),
        e.snapshot.hostname,
        e.snapshot.tags.join(','),
        e.snapshot.paths.join(','),
        e.snapshot.summary ? formatBytes(e.snapshot.summary.totalBytesProcessed) : '',
      ]);
      printTable(['ID', 'Time', 'Host', 'Tags', 'Paths', 'Size'], rows);
    }
    await repo.close();
  },
});

function printTable(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  process.stdout.write([line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n') + '\n');
}
