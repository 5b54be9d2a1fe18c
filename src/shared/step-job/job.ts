// A step's Job, made from its template: the suspended CronJob `ferry-step-<step>` in ferry's namespace (for transfer,
// `ferry-step-transfer-backup` or `-restore`), read at dispatch time so an edit in Git applies to the next Job. The
// template keeps the pod (image, resources, securityContext, scheduling); ferry adds the name, the labels that find
// every Job of a resource, the resource to work on, for transfer the exposed volume, and the location's Secrets.
import type { FerryResource, ResourceKind, StepName } from '../api/types.ts';
import type { KubeObject } from '../kube/kube.ts';
import { mountSecrets } from '../location/mounted-secrets.ts';
import {
  hostnameLabel,
  jobName,
  mounts,
  resourceAnnotation,
  resourceRef,
  stepContainer,
  stepEnv,
  stepJobLabels,
} from './contract.ts';

/**
 * A backup's transfer only reads its volume, a restore's writes owners, modes and device nodes: two templates, so
 * a backup's pod never holds the capabilities a restore needs.
 */
export function templateName(step: StepName, kind: ResourceKind): string {
  if (step === 'transfer') return kind === 'DataUpload' ? 'ferry-step-transfer-backup' : 'ferry-step-transfer-restore';
  return `ferry-step-${step}`;
}

export interface ExposedVolume {
  /** the expose step's claim in ferry's namespace, named after the resource's uid */
  claimName: string;
  block: boolean;
  readOnly: boolean;
}

export interface JobRequest {
  resource: FerryResource;
  step: StepName;
  attempt: number;
  /** ferry's namespace, where every Job runs */
  namespace: string;
  /** transfer only: the volume the expose step made */
  volume?: ExposedVolume;
  /** run on this node (set when the per-node transfer limit picked it) */
  node?: string;
  /** the Secrets of the resource's location, mounted for the steps that open its repository */
  secrets?: string[];
}

export interface Container {
  name: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  volumeDevices?: { name: string; devicePath: string }[];
}

export interface PodSpec {
  containers: Container[];
  volumes?: Record<string, unknown>[];
  nodeSelector?: Record<string, string>;
}

interface JobTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  } & Record<string, unknown>;
}

function jobTemplateOf(cronJob: KubeObject): JobTemplate {
  const template = (cronJob.spec as { jobTemplate?: JobTemplate } | undefined)?.jobTemplate;
  if (!template?.spec?.template?.spec?.containers)
    throw new Error(`CronJob ${cronJob.metadata.name} has no jobTemplate with a pod template.`);
  return structuredClone(template);
}

function addVolume(pod: PodSpec, container: Container, volume: ExposedVolume): void {
  const { volumeName, volumePath, devicePath } = mounts;
  pod.volumes = [
    ...(pod.volumes ?? []),
    { name: volumeName, persistentVolumeClaim: { claimName: volume.claimName, readOnly: volume.readOnly } },
  ];
  if (volume.block) container.volumeDevices = [...(container.volumeDevices ?? []), { name: volumeName, devicePath }];
  else
    container.volumeMounts = [
      ...(container.volumeMounts ?? []),
      { name: volumeName, mountPath: volumePath, readOnly: volume.readOnly },
    ];
}

/** What every step Job carries: its name, its step's arguments and attempt, the labels and the resource annotation. */
export interface StepJobParts {
  name: string;
  namespace: string;
  args: string[];
  attempt: number;
  /** on the Job and its pods */
  labels: Record<string, string>;
  /** the resource annotation's value */
  resource: string;
}

/**
 * The Job from its template CronJob, and its pod and step container to add to (they are the Job's own, so what is
 * added shows in the Job).
 */
export function stepJobFromTemplate(
  cronJob: KubeObject,
  parts: StepJobParts,
): { job: KubeObject; pod: PodSpec; container: Container } {
  const template = jobTemplateOf(cronJob);
  const pod = template.spec.template.spec;
  const container = pod.containers.find((c) => c.name === stepContainer);
  if (!container) throw new Error(`CronJob ${cronJob.metadata.name} has no container named "${stepContainer}".`);
  container.args = parts.args;
  container.env = [
    ...(container.env ?? []).filter((e) => e.name !== stepEnv.attempt),
    { name: stepEnv.attempt, value: String(parts.attempt) },
  ];
  const podMeta = template.spec.template.metadata ?? {};
  template.spec.template.metadata = { ...podMeta, labels: { ...podMeta.labels, ...parts.labels } };
  const job: KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: parts.name,
      namespace: parts.namespace,
      labels: { ...template.metadata?.labels, ...parts.labels },
      annotations: { ...template.metadata?.annotations, [resourceAnnotation]: parts.resource },
    },
    spec: template.spec,
  };
  return { job, pod, container };
}

export function buildJob(cronJob: KubeObject, req: JobRequest): KubeObject {
  const { resource, step, attempt } = req;
  const { job, pod, container } = stepJobFromTemplate(cronJob, {
    name: jobName(resource.kind, resource.metadata.uid ?? '', step, attempt),
    namespace: req.namespace,
    args: [step, resourceRef(resource)],
    attempt,
    labels: stepJobLabels(resource, step, attempt),
    resource: resourceRef(resource),
  });
  if (req.volume) addVolume(pod, container, req.volume);
  if (req.secrets?.length) mountSecrets(pod, container, req.secrets);
  if (req.node) pod.nodeSelector = { ...pod.nodeSelector, [hostnameLabel]: req.node };
  return job;
}
