// Carries out a retention plan after a run: deletes each backup it lets go (that incarnation only: a uid
// precondition), and says in one sentence what went and what a rule above the keep-policy kept.
import type { ObjectMeta } from '../../shared/api/types.ts';
import type { RetentionPlan } from '../../shared/retention/plan.ts';
import type { ScheduleContext } from './context.ts';

export interface RetentionDone {
  deleted: string[];
  note: string;
}

export const nothingDeleted: RetentionDone = { deleted: [], note: '' };

export async function deletePlanned(
  ctx: ScheduleContext,
  kind: 'DataUpload' | 'AppBackup',
  plan: RetentionPlan<{ metadata: ObjectMeta }>,
): Promise<RetentionDone> {
  const deleted: string[] = [];
  for (const b of plan.delete)
    if (
      await ctx.kube.delete({ kind, namespace: b.metadata.namespace, name: b.metadata.name }, { uid: b.metadata.uid })
    )
      deleted.push(b.metadata.name);
  const spared = plan.spared.map((x) => `${x.name} (${x.why})`).join(', ');
  const what = kind === 'AppBackup' ? 'AppBackup(s)' : 'backup(s)';
  return {
    deleted,
    note: `Retention deleted ${deleted.length} ${what}${deleted.length ? `: ${deleted.join(', ')}` : ''}${spared ? `; kept ${spared}` : ''}.`,
  };
}
