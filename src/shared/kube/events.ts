// Kubernetes Events (events.k8s.io/v1) about ferry's resources, as `kubectl describe` shows them: a reason in
// UpperCamelCase and a note a person can read. Events are a courtesy; callers log a failure to write one and go on.
import { randomBytes } from 'node:crypto';
import type { Kube, KubeObject } from './kube.ts';
import { fitted } from './names.ts';

export interface EventInput {
  type: 'Normal' | 'Warning';
  /** UpperCamelCase, e.g. SnapshotReady */
  reason: string;
  /** one or two sentences */
  note: string;
  /** what the reporter did, e.g. Snapshot */
  action: string;
}

export interface EventSource {
  /** e.g. ferry.dev/step-snapshot */
  controller: string;
  /** the pod (or process) that reports */
  instance: string;
}

const maxNote = 1024;

export function eventFor(regarding: KubeObject, ev: EventInput, source: EventSource, now: Date): KubeObject {
  const { name, namespace, uid, resourceVersion } = regarding.metadata;
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: {
      name: `${fitted(name, 200)}.${now.getTime().toString(16)}${randomBytes(3).toString('hex')}`,
      namespace: namespace ?? 'default',
    },
    eventTime: now.toISOString().replace('Z', '000Z'),
    reportingController: source.controller,
    reportingInstance: source.instance.slice(0, 128),
    action: ev.action.slice(0, 128),
    reason: ev.reason.slice(0, 128),
    note: ev.note.length > maxNote ? `${ev.note.slice(0, maxNote - 3)}...` : ev.note,
    type: ev.type,
    regarding: { apiVersion: regarding.apiVersion, kind: regarding.kind, name, namespace, uid, resourceVersion },
  };
}

export async function emitEvent(
  kube: Kube,
  regarding: KubeObject,
  ev: EventInput,
  source: EventSource,
  now = new Date(),
): Promise<void> {
  await kube.create(eventFor(regarding, ev, source, now));
}
