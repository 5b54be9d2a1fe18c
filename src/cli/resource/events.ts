// The Events about one object, oldest first, as `kubectl describe` lists them. Events are found by the object's
// uid, so those of an earlier object with the same name do not show.
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';

export interface EventLine {
  /** RFC 3339 */
  time: string;
  type: string;
  reason: string;
  /** who reported it, e.g. ferry.dev/step-transfer */
  from: string;
  note: string;
  count: number;
}

interface EventObject extends KubeObject {
  eventTime?: string;
  deprecatedLastTimestamp?: string;
  deprecatedFirstTimestamp?: string;
  deprecatedCount?: number;
  series?: { count?: number; lastObservedTime?: string };
  reportingController?: string;
  deprecatedSource?: { component?: string };
  type?: string;
  reason?: string;
  note?: string;
  regarding?: { uid?: string };
}

function lineOf(e: EventObject): EventLine {
  return {
    time:
      e.series?.lastObservedTime ??
      e.eventTime ??
      e.deprecatedLastTimestamp ??
      e.deprecatedFirstTimestamp ??
      e.metadata.creationTimestamp ??
      '',
    type: e.type ?? '',
    reason: e.reason ?? '',
    from: e.reportingController ?? e.deprecatedSource?.component ?? '',
    note: e.note ?? '',
    count: e.series?.count ?? e.deprecatedCount ?? 1,
  };
}

export async function eventsAbout(kube: Kube, obj: KubeObject): Promise<EventLine[]> {
  const all = await kube.list<EventObject>('Event', { namespace: obj.metadata.namespace });
  return all
    .filter((e) => e.regarding?.uid === obj.metadata.uid)
    .map(lineOf)
    .sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
}
