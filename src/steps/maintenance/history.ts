// The maintenance history in a BackupStorageLocation's status: per repository (source namespace) its latest runs,
// newest first and bounded, the latest run of all for the printer columns, and a Maintained condition that turns
// False when a run failed. Pure functions over the status; the caller writes it with optimistic concurrency.
import type {
  BackupStorageLocationStatus,
  MaintenanceOutcome,
  MaintenanceRun,
  MaintenanceTask,
  RepositoryMaintenance,
} from '../../shared/api/types.ts';
import { setCondition, type ConditionInput } from '../../shared/kube/conditions.ts';

/** Runs kept per repository (the CRD allows at most this many). */
export const historyLimit = 10;

export const maintainedCondition = 'Maintained';

const taskWords: Record<MaintenanceTask, string> = { prune: 'Prune', check: 'Check', 'check-data': 'CheckData' };

/** The status with `run` of the repository of `namespace` recorded (a new object; the input is not changed). */
export function recordRun(
  status: BackupStorageLocationStatus | undefined,
  namespace: string,
  run: MaintenanceRun,
  now: Date,
): BackupStorageLocationStatus {
  const next: BackupStorageLocationStatus = structuredClone(status ?? {});
  const maintenance = (next.maintenance ??= {});
  const repositories = (maintenance.repositories ??= []);
  let repo = repositories.find((r) => r.namespace === namespace);
  if (!repo) {
    repo = { namespace, runs: [] };
    repositories.push(repo);
    repositories.sort((a, b) => a.namespace.localeCompare(b.namespace));
  }
  repo.runs = [run, ...repo.runs].slice(0, historyLimit);
  maintenance.lastTask = run.task;
  maintenance.lastOutcome = run.outcome;
  maintenance.lastRunTime = run.startTime;
  next.conditions = setCondition(next.conditions, conditionOf(repositories, namespace, run), now);
  return next;
}

/** False while the latest run of any repository failed, so a failure elsewhere is not hidden by this success. */
function conditionOf(
  repositories: readonly RepositoryMaintenance[],
  namespace: string,
  run: MaintenanceRun,
): ConditionInput {
  const failing = repositories.filter((r) => r.runs[0]?.outcome === 'Failed');
  const shown =
    run.outcome === 'Failed' || failing.length === 0
      ? { namespace, run }
      : { namespace: failing[0].namespace, run: failing[0].runs[0] };
  const what = `the latest ${shown.run.task} of the repository of namespace ${shown.namespace} ${shown.run.outcome === 'Skipped' ? 'was skipped' : shown.run.outcome.toLowerCase()}`;
  const message = shown.run.message ? `${what}: ${shown.run.message}` : `${what}.`;
  const others = failing.length > 1 ? ` (${failing.length} repositories failing)` : '';
  return {
    type: maintainedCondition,
    status: failing.length > 0 ? 'False' : 'True',
    reason: `${taskWords[shown.run.task]}${shown.run.outcome}`,
    message: (message + others).slice(0, 4096),
  };
}

/** The worst of several outcomes: one failure makes the whole run Failed, one skip makes it Skipped. */
export function worstOutcome(outcomes: readonly MaintenanceOutcome[]): MaintenanceOutcome {
  if (outcomes.includes('Failed')) return 'Failed';
  if (outcomes.includes('Skipped')) return 'Skipped';
  return 'Succeeded';
}
