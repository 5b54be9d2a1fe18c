// Starting a step Job: its template read at dispatch time (so an edit in Git applies to the next Job), for transfer
// the volume the expose step made, for the steps that open a repository the location's Secrets. The dispatcher,
// its sweep and `ferry rerun` all start Jobs here, so a Job made by hand is the Job the dispatcher would make.
import { labels } from '../step-job/contract.ts';
import type { FerryResource, StepName } from '../api/types.ts';
import { isAlreadyExists } from '../kube/errors.ts';
import type { Kube, KubeObject } from '../kube/kube.ts';
import { secretsOfLocation } from '../location/mounted-secrets.ts';
import { buildJob, templateName, type ExposedVolume } from '../step-job/job.ts';
import { exposureName } from '../step-job/names.ts';

export type StartResult = 'created' | 'exists';

export interface StartRequest {
  resource: FerryResource;
  step: StepName;
  attempt: number;
  /** run on this node (set when the per-node transfer limit picked it) */
  node?: string;
}

/**
 * The claim the expose step made, by the name it derives from the resource's uid, and only if labelled with that
 * uid: never a name from status.exposure, which whoever may write the status could point at any claim.
 */
export async function exposedClaim(
  kube: Kube,
  ferryNamespace: string,
  resource: FerryResource,
): Promise<KubeObject | undefined> {
  const claim = await kube.get<KubeObject>({
    kind: 'PersistentVolumeClaim',
    namespace: ferryNamespace,
    name: exposureName(resource),
  });
  return claim?.metadata.labels?.[labels.uid] === resource.metadata.uid ? claim : undefined;
}

async function exposedVolume(
  kube: Kube,
  ferryNamespace: string,
  resource: FerryResource,
): Promise<ExposedVolume | undefined> {
  const claim = await exposedClaim(kube, ferryNamespace, resource);
  // without its volume the transfer step fails with a message saying so, which is clearer than waiting here
  if (!claim) return undefined;
  const block = (claim.spec as { volumeMode?: string } | undefined)?.volumeMode === 'Block';
  return { claimName: claim.metadata.name, block, readOnly: resource.kind === 'DataUpload' };
}

/** Creates the step Job from its template; a Job of that name already there is success. */
export async function startStepJob(
  kube: Kube,
  ferryNamespace: string,
  req: StartRequest,
): Promise<{ result: StartResult; job: string }> {
  const { resource, step, attempt, node } = req;
  const template = templateName(step, resource.kind);
  const cronJob = await kube.get({ kind: 'CronJob', namespace: ferryNamespace, name: template });
  if (!cronJob)
    throw new Error(
      `The Job template CronJob ${ferryNamespace}/${template} does not exist; install jobs/ from ferry's deploy/ kustomization.`,
    );
  const volume = step === 'transfer' ? await exposedVolume(kube, ferryNamespace, resource) : undefined;
  const secrets =
    step === 'transfer' || step === 'delete'
      ? await secretsOfLocation(kube, ferryNamespace, resource.spec.backupStorageLocation)
      : undefined;
  const job = buildJob(cronJob, { resource, step, attempt, namespace: ferryNamespace, volume, node, secrets });
  try {
    await kube.create(job);
    return { result: 'created', job: job.metadata.name };
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    return { result: 'exists', job: job.metadata.name };
  }
}
