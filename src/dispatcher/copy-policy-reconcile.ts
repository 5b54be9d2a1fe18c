// CopyPolicies at work: the sweep (every minute) makes every DataCopy the policies call for and writes each
// policy's status; the webhook, when a DataUpload turns Completed, makes that backup's copies at once. Both ask
// ./copy-policy.ts what to copy; a DataCopy's name is the same on every pass, so a create that meets AlreadyExists
// means another pass made it.
import type { CopyPolicy, DataCopy } from '../shared/api/copy.ts';
import type { BackupStorageLocation, BackupStorageLocationSpec, DataUpload } from '../shared/api/types.ts';
import type { Resource } from '../shared/dispatch/status.ts';
import { parseDuration } from '../shared/api/duration.ts';
import { isAlreadyExists } from '../shared/kube/errors.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import { copyVerdict, policyCopy } from './copy-policy.ts';
import { policyStatus, statusChanged } from './copy-policy-status.ts';

export interface CopyPolicyContext {
  kube: Kube;
  /** ferry's namespace: CopyPolicies and locations */
  namespace: string;
  now: () => Date;
}

export interface CopiesMade {
  created: string[];
  errors: string[];
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function locations(ctx: CopyPolicyContext): Promise<Map<string, BackupStorageLocationSpec>> {
  const list = await ctx.kube.list<BackupStorageLocation & KubeObject>('BackupStorageLocation', {
    namespace: ctx.namespace,
  });
  return new Map(list.map((l) => [l.metadata.name, l.spec]));
}

/** Creates the copies `policy` calls for among `uploads`; returns why it could not, if it could not. */
async function copyFor(
  ctx: CopyPolicyContext,
  policy: CopyPolicy,
  destinations: Map<string, BackupStorageLocationSpec>,
  uploads: readonly DataUpload[],
  copies: readonly DataCopy[],
  made: CopiesMade,
): Promise<string | undefined> {
  const problems: string[] = [];
  if (!destinations.has(policy.spec.sourceLocation))
    problems.push(`spec.sourceLocation: location "${policy.spec.sourceLocation}" does not exist`);
  if (!destinations.has(policy.spec.destinationLocation))
    problems.push(`spec.destinationLocation: location "${policy.spec.destinationLocation}" does not exist`);
  const destination = destinations.get(policy.spec.destinationLocation);
  if (destination?.recoverVersions === true)
    problems.push(
      `spec.destinationLocation: location "${policy.spec.destinationLocation}" has spec.recoverVersions, so nothing is written there`,
    );
  try {
    parseDuration(policy.spec.expire);
  } catch (err) {
    // checked once for the policy rather than once per backup
    return [...problems, `spec.expire: ${message(err)}`].join('; ');
  }
  const nowMs = ctx.now().getTime();
  for (const du of uploads) {
    const what = `DataUpload ${du.metadata.namespace}/${du.metadata.name}`;
    try {
      if (!copyVerdict(policy, destination, du, copies, nowMs).copy) continue;
      const copy = policyCopy(policy, du);
      await ctx.kube.create(copy as DataCopy & KubeObject);
      made.created.push(
        `DataCopy ${copy.metadata.namespace}/${copy.metadata.name} (CopyPolicy ${policy.metadata.name})`,
      );
    } catch (err) {
      if (isAlreadyExists(err)) continue;
      const problem = `${what}: ${message(err)}`;
      problems.push(problem);
      made.errors.push(`CopyPolicy ${policy.metadata.name}: ${problem}`);
    }
  }
  return problems.length ? problems.join('; ') : undefined;
}

async function policies(ctx: CopyPolicyContext): Promise<CopyPolicy[]> {
  return ctx.kube.list<CopyPolicy & KubeObject>('CopyPolicy', { namespace: ctx.namespace });
}

/** The sweep's pass: every policy's copies among every DataUpload, then each policy's status. */
export async function sweepCopyPolicies(ctx: CopyPolicyContext): Promise<CopiesMade> {
  const made: CopiesMade = { created: [], errors: [] };
  const all = await policies(ctx);
  if (all.length === 0) return made;
  const [destinations, uploads, copies] = await Promise.all([
    locations(ctx),
    ctx.kube.list<DataUpload & KubeObject>('DataUpload'),
    ctx.kube.list<DataCopy & KubeObject>('DataCopy'),
  ]);
  for (const policy of all) {
    let problem: string | undefined;
    try {
      problem = await copyFor(ctx, policy, destinations, uploads, copies, made);
    } catch (err) {
      problem = message(err);
      made.errors.push(`CopyPolicy ${policy.metadata.name}: ${problem}`);
    }
    try {
      const status = policyStatus(policy, copies, problem, ctx.now());
      if (statusChanged(policy, status))
        await ctx.kube.patch(
          { kind: 'CopyPolicy', namespace: ctx.namespace, name: policy.metadata.name },
          { status },
          { status: true },
        );
    } catch (err) {
      made.errors.push(`CopyPolicy ${policy.metadata.name}: status: ${message(err)}`);
    }
  }
  return made;
}

/** A DataUpload just turned Completed: the policies of its location copy it now rather than at the next sweep. */
export async function copyCompleted(ctx: CopyPolicyContext, du: DataUpload): Promise<CopiesMade> {
  const made: CopiesMade = { created: [], errors: [] };
  const concerned = (await policies(ctx)).filter((p) => p.spec.sourceLocation === du.spec.backupStorageLocation);
  if (concerned.length === 0) return made;
  const [destinations, copies] = await Promise.all([
    locations(ctx),
    ctx.kube.list<DataCopy & KubeObject>('DataCopy', { namespace: du.metadata.namespace }),
  ]);
  for (const policy of concerned) await copyFor(ctx, policy, destinations, [du], copies, made);
  return made;
}

/** A stored change that made a DataUpload Completed (a backup just finished). */
export function turnedCompleted(before: Resource | undefined, after: Resource): after is Resource & DataUpload {
  return after.kind === 'DataUpload' && after.status?.phase === 'Completed' && before?.status?.phase !== 'Completed';
}
