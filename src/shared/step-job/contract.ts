// The step-Job contract: what the dispatcher writes into a step Job and the step reads back, written once. The Job's
// name and labels (how the dispatcher, the sweep, the CLI and `kubectl get jobs -l ...` find a resource's Jobs),
// the resource it works on (its one argument), where the exposed volume is mounted, and the environment the step
// reads. The labels go on every object ferry makes for a resource (Jobs, pods, exposure PVCs and snapshots), so
// `kubectl get <kind> -l ferry.dev/uid=<uid>` finds all of it; a resource name longer than a label value allows is
// kept there shortened with a hash (shared/kube/names.ts), the same on every run.
import type { FerryResource, ResourceKind, StepName } from '../api/types.ts';
import { labelValue } from '../kube/names.ts';

export const labels = {
  kind: 'ferry.dev/kind',
  /** the resource's name, or for a name over 63 characters its first 46 and a hash (`resourceNameLabel`) */
  name: 'ferry.dev/name',
  namespace: 'ferry.dev/namespace',
  uid: 'ferry.dev/uid',
  step: 'ferry.dev/step',
  attempt: 'ferry.dev/attempt',
} as const;

/** On a step Job: the resource it works on, in full (`resourceRef`), whatever its length. */
export const resourceAnnotation = 'ferry.dev/resource';

/** The container of a step Job's template that runs the step. */
export const stepContainer = 'step';
/** Where the transfer Job's pod finds the exposed volume: a filesystem at `volumePath`, a block device at `devicePath`. */
export const mounts = { volumeName: 'ferry-volume', volumePath: '/ferry/volume', devicePath: '/ferry/device' } as const;
/** The node a transfer is pinned to, in the Job's nodeSelector. */
export const hostnameLabel = 'kubernetes.io/hostname';

/** Environment of a step's pod: set by the dispatcher (attempt), the template (downward API) or an operator (paths). */
export const stepEnv = {
  /** which attempt of its step this Job is (1, 2, ...): recorded in status.steps.<step>.attempts */
  attempt: 'FERRY_ATTEMPT',
  jobName: 'FERRY_JOB_NAME',
  podName: 'FERRY_POD_NAME',
  nodeName: 'FERRY_NODE_NAME',
  volumePath: 'FERRY_VOLUME_PATH',
  devicePath: 'FERRY_DEVICE_PATH',
} as const;

/** Deterministic Job name: the same resource, step and attempt always give the same name (at most 63 characters). */
export function jobName(kind: ResourceKind, uid: string, step: StepName, attempt: number): string {
  const k = kind === 'DataUpload' ? 'up' : 'down';
  return `ferry-${k}-${uid.replaceAll('-', '').slice(0, 16)}-${step}-${attempt}`;
}

/** The value of `ferry.dev/name` for a resource name: `kubectl get jobs -l ferry.dev/name=<this>`. */
export function resourceNameLabel(name: string): string {
  return labelValue(name);
}

/** The labels tying an object to its resource. */
export function resourceLabels(r: FerryResource): Record<string, string> {
  return {
    [labels.kind]: r.kind,
    [labels.name]: resourceNameLabel(r.metadata.name),
    [labels.namespace]: r.metadata.namespace ?? '',
    [labels.uid]: r.metadata.uid ?? '',
  };
}

/** The labels of one step Job (and its pods): the resource's, the step and the attempt. */
export function stepJobLabels(r: FerryResource, step: StepName, attempt: number): Record<string, string> {
  return { ...resourceLabels(r), [labels.step]: step, [labels.attempt]: String(attempt) };
}

/** A selector for every object ferry made for the resource with this uid. */
export function uidSelector(uid: string): string {
  return `${labels.uid}=${uid}`;
}

export interface ResourceRef {
  kind: ResourceKind;
  namespace: string;
  name: string;
}

const kinds: Record<string, ResourceKind> = { dataupload: 'DataUpload', datadownload: 'DataDownload' };

/** `<Kind>/<namespace>/<name>`: a step Job's argument, its resource annotation, and how logs name a resource. */
export function resourceRef(r: FerryResource): string {
  return `${r.kind}/${r.metadata.namespace}/${r.metadata.name}`;
}

/** The reference `resourceRef` wrote (the kind in any case). */
export function parseResourceRef(text: string): ResourceRef {
  const parts = text.split('/');
  const kind = kinds[parts[0]?.toLowerCase() ?? ''];
  if (parts.length !== 3 || !kind || !parts[1] || !parts[2]) {
    throw new Error(
      `"${text}" does not name a resource: expected DataUpload/<namespace>/<name> or DataDownload/<namespace>/<name>`,
    );
  }
  return { kind, namespace: parts[1], name: parts[2] };
}

/** Whether ferry moves this resource's data: spec.dataMover empty or "ferry"; others are someone else's. */
export function isOurs(r: FerryResource): boolean {
  const mover = r.spec?.dataMover;
  return mover === undefined || mover === '' || mover === 'ferry';
}
