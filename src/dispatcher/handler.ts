// One admission review in, one answer out: check the envelope, validate the change (objects first, then the cluster
// for new resources), and for an allowed change that is not a dry run, dispatch. Never throws: whatever goes wrong
// becomes a denial that says what happened (a validating webhook that fails open would admit anything).
import { group } from '../shared/api/types.ts';
import type { ResourceKind } from '../shared/api/types.ts';
import type { Kube } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { allow, deny, invalid, parseReview, reviewResponse } from './admission.ts';
import type { AdmissionRequest, AdmissionResponse, AdmissionReview, Denial } from './admission.ts';
import { isOurs } from './decide.ts';
import { locationAdmitted } from './location.ts';
import type { Change, Dispatcher, Resource } from './dispatcher.ts';
import type { DispatcherMetrics } from './metrics.ts';
import { checkReferences } from './references.ts';
import { asResource, checkCreate, checkSpecUpdate, checkStatusUpdate, isDenial } from './rules.ts';
import { checkSchedule, scheduleAdmitted } from './schedule.ts';

export interface HandlerDeps {
  kube: Kube;
  namespace: string;
  dispatcher: Dispatcher;
  metrics: DispatcherMetrics;
  log: Logger;
  /** time to check and dispatch before answering anyway; below the webhook's timeoutSeconds */
  budgetMs: number;
}

export type HandlerResult = { status: 200; review: AdmissionReview } | { status: 400; error: string };

const kinds: readonly string[] = ['DataUpload', 'DataDownload'];

interface Verdict {
  denial?: Denial;
  change?: Change;
}

class OutOfTime extends Error {}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new OutOfTime()), Math.max(0, ms)); });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

async function judge(req: AdmissionRequest, kind: ResourceKind, deps: HandlerDeps): Promise<Verdict> {
  if (req.operation === 'DELETE') {
    const resource = asResource(kind, req.oldObject);
    // deletion is never refused; a deleted DataUpload needs its delete step
    return isDenial(resource) ? {} : { change: { operation: 'DELETE', resource: resource as Resource } };
  }
  if (req.operation === 'CONNECT') return {};
  const resource = asResource(kind, req.object);
  if (isDenial(resource)) return { denial: resource };
  if (req.operation === 'CREATE') {
    const denial = checkCreate(resource) ?? (isOurs(resource) ? await checkReferences(deps.kube, deps.namespace, resource) : undefined);
    return denial ? { denial } : { change: { operation: 'CREATE', resource: resource as Resource } };
  }
  const old = asResource(kind, req.oldObject);
  if (isDenial(old)) return { denial: invalid(`oldObject: ${old.message}`) };
  const denial = req.subResource === 'status' ? checkStatusUpdate(old, resource) : req.subResource ? undefined : checkSpecUpdate(old, resource);
  return denial ? { denial } : { change: { operation: 'UPDATE', resource: resource as Resource, old: old as Resource } };
}

/** A BackupSchedule has no phases: check it, and let a new generation (or a deletion) start what it needs. */
async function answerSchedule(req: AdmissionRequest, deps: HandlerDeps): Promise<AdmissionResponse> {
  if (req.operation === 'CREATE' || req.operation === 'UPDATE') {
    const denial = checkSchedule(req.object, req.subResource === 'status' ? 'status' : 'spec');
    if (denial) return deny(req.uid, denial);
  }
  if (!req.dryRun) {
    await within(scheduleAdmitted(req, deps), deps.budgetMs)
      .catch((err) => deps.log.warn('could not act on a BackupSchedule change; the sweep will', { error: err instanceof Error ? err.message : String(err) }));
  }
  return allow(req.uid);
}

/** A storage location is never denied here (its CRD's schema checks it); a new spec starts the maintenance reconcile. */
async function answerLocation(req: AdmissionRequest, deps: HandlerDeps): Promise<AdmissionResponse> {
  if (!req.dryRun) {
    await within(locationAdmitted(req, deps), deps.budgetMs)
      .catch((err) => deps.log.warn('could not start the maintenance reconcile; the periodic one will', { error: err instanceof Error ? err.message : String(err) }));
  }
  return allow(req.uid);
}

async function answer(req: AdmissionRequest, deps: HandlerDeps): Promise<AdmissionResponse> {
  const kind = req.kind.kind;
  if (req.kind.group === group && kind === 'BackupSchedule') return answerSchedule(req, deps);
  if (req.kind.group === group && kind === 'BackupStorageLocation') return answerLocation(req, deps);
  if (req.kind.group !== group || !kinds.includes(kind)) {
    return allow(req.uid, [`ferry's dispatcher does not validate ${req.kind.group}/${kind}; check the webhook rules`]);
  }
  const started = Date.now();
  let verdict: Verdict;
  try {
    verdict = await within(judge(req, kind as ResourceKind, deps), deps.budgetMs);
  } catch (err) {
    const why = err instanceof OutOfTime ? `the apiserver did not answer within ${deps.budgetMs} ms` : err instanceof Error ? err.message : String(err);
    return deny(req.uid, { code: 422, reason: 'Invalid', message: `ferry could not check this ${kind} (${why}); try again` });
  }
  if (verdict.denial) return deny(req.uid, verdict.denial);
  if (verdict.change && !req.dryRun) {
    // past the budget the answer goes out anyway; the dispatch goes on, and the sweep covers it if it is lost
    await within(deps.dispatcher.admitted(verdict.change), deps.budgetMs - (Date.now() - started)).catch(() => undefined);
  }
  return allow(req.uid);
}

export async function handleReview(body: unknown, deps: HandlerDeps): Promise<HandlerResult> {
  const req = parseReview(body);
  if (typeof req === 'string') return { status: 400, error: req };
  const started = process.hrtime.bigint();
  const kind = String(req.kind.kind);
  let response: AdmissionResponse;
  try {
    response = await answer(req, deps);
  } catch (err) {
    response = deny(req.uid, invalid(`ferry's dispatcher failed on this request: ${err instanceof Error ? err.message : String(err)}`));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const labels = { kind, operation: req.subResource ? `${req.operation}/${req.subResource}` : req.operation };
  deps.metrics.admissions.inc({ ...labels, result: response.allowed ? 'allowed' : 'denied' });
  deps.metrics.latency.observe({ kind }, seconds);
  if (!response.allowed) {
    deps.metrics.denials.inc({ kind, reason: response.status?.reason ?? 'Unknown' });
    deps.log.info('denied', { kind, namespace: req.namespace, name: req.name, operation: labels.operation, message: response.status?.message });
  }
  return { status: 200, review: reviewResponse(response) };
}
