// `location create --cross-namespace-restores FROM=TO[,TO...]` (repeatable): spec.crossNamespaceRestores, the rules
// that let a restore in namespace TO read the repository of namespace FROM. Without one a restore into another
// namespace is refused.
import type { BackupStorageLocationSpec } from '../../shared/api/types.ts';
import { repeated } from '../repo/common.ts';
import { UsageError } from '../run.ts';

const namespace = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const flag = '--cross-namespace-restores';

export function crossNamespaceRestores(
  rawArgs: readonly string[],
): BackupStorageLocationSpec['crossNamespaceRestores'] {
  const rules: { from: string; to: string[] }[] = [];
  for (const rule of repeated(rawArgs, 'cross-namespace-restores')) {
    const eq = rule.indexOf('=');
    const from = rule.slice(0, eq).trim();
    const to = [
      ...new Set(
        rule
          .slice(eq + 1)
          .split(',')
          .map((s) => s.trim()),
      ),
    ];
    const bad = [from, ...to].find((n) => n !== '*' && (n.length > 63 || !namespace.test(n)));
    if (eq <= 0 || from === '*' || to.includes('') || bad !== undefined)
      throw new UsageError(
        `${flag} "${rule}" must be FROM=TO[,TO...]: the namespace whose backups are read, then the namespaces that may restore them (or * for all), e.g. ${flag} app=restore`,
      );
    const same = rules.find((r) => r.from === from);
    if (same) same.to = [...new Set([...same.to, ...to])];
    else rules.push({ from, to });
  }
  return rules.length > 0 ? rules : undefined;
}
