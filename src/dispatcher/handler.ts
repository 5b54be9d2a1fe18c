// One admission review in, one answer out: check the envelope, validate the change (objects first, then the cluster
// for new resources), and for an allowed change that is not a dry run, follow it: what the review carries decides
// only allow or deny, and whatever the change sets off is decided from the object as the apiserver stores it
// (./stored.ts). Never throws: whatever goes wrong becomes a denial that says what happened (a validating webhook
// that fails open would admit anything).
import { group } from '../shared/api/types.ts';
import type { ResourceKind } from '../shared/api/types.ts';
import type { Kube } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import type { KindName } from '../shared/kube/resources.ts';
import { allow, deny, invalid, parseReview, reviewResponse } from './admission.ts';
import type { AdmissionRequest, AdmissionResponse, AdmissionReview, Denial } from './admission.ts';
import { isOurs } from '../shared/step-job/contract.ts';
import { locationChanged } from './location.ts';
import { mayStartSomething } from './dispatcher.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { Resource } from '../shared/dispatch/status.ts';
import type { DispatcherMetrics } from './metrics.ts';
import { checkReferences } from './references.ts';
import { asResource, checkCreate, checkSpecUpdate, checkStatusUpdate, isDenial } from './rules.ts';
import { checkSchedule, scheduleChanged } from './schedule.ts';
import { checkMirrorCreate, checkMirrorUpdate } from './mirror-rules.ts';
import { checkSyncedCreate, checkSyncedStatus, checkSyncedUpdate } from './synced-rules.ts';
import { isMirror } from '../shared/velero/mirror.ts';
import { veleroGroup } from '../shared/velero/types.ts';
import type { VeleroObject } from '../shared/velero/types.ts';
import type { StoredChange, StoredChanges } from './stored.ts';
import type { AppKind } from '../shared/api/app.ts';
import type { AppResource } from '../shared/app/jobs.ts';
import { appChanged } from './app.ts';
import { copyChanged } from './copy.ts';
import { checkAppCreate, checkAppUpdate, isAppKind } from './app-rules.ts';
import type { CopyKind } from '../shared/api/copy.ts';
import { isCopyKind, judgeCopyReview } from './copy-rules.ts';
import { checkLocation } from './location-rules.ts';
import { copyCompleted, turnedCompleted } from './copy-policy-reconcile.ts';

export interface HandlerDeps {
  kube: Kube;
  namespace: string;
  dispatcher: Dispatcher;
  /** reads what a review is about before the answer, and the stored change after it */
  changes: StoredChanges;
  metrics: DispatcherMetrics;
  log: Logger;
  /** time to check a review and read the object it names before answering anyway; below the webhook's timeoutSeconds */
  budgetMs: number;
}

export type HandlerResult = { status: 200; review: AdmissionReview } | { status: 400; error: string };

const kinds: readonly string[] = ['DataUpload', 'DataDownload'];

interface Verdict {
  denial?: Denial;
  /** the change, as the review tells it, may set something off: worth reading back once stored */
  follow?: boolean;
}

class OutOfTime extends Error {}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutOfTime()), Math.max(0, ms));
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

async function judge(req: AdmissionRequest, kind: ResourceKind, deps: HandlerDeps): Promise<Verdict> {
  // deletion is never refused; a deleted DataUpload needs its delete step
  if (req.operation === 'DELETE') return { follow: true };
  if (req.operation === 'CONNECT') return {};
  const resource = asResource(kind, req.object);
  if (isDenial(resource)) return { denial: resource };
  if (req.operation === 'CREATE') {
    const denial =
      checkMirrorCreate(resource, req.userInfo?.username, deps.namespace) ??
      checkSyncedCreate(resource, req.userInfo?.username, deps.namespace) ??
      checkCreate(resource) ??
      (isOurs(resource) ? await checkReferences(deps.kube, deps.namespace, resource) : undefined);
    return denial ? { denial } : { follow: true };
  }
  const old = asResource(kind, req.oldObject);
  if (isDenial(old)) return { denial: invalid(`oldObject: ${old.message}`) };
  const denial =
    req.subResource === 'status'
      ? (checkSyncedStatus(old, req.userInfo?.username, deps.namespace) ?? checkStatusUpdate(old, resource))
      : req.subResource
        ? undefined
        : (checkMirrorUpdate(old, resource) ?? checkSyncedUpdate(old, resource) ?? checkSpecUpdate(old, resource));
  if (denial) return { denial };
  // a review can only spare work here: a progress update it claims is read back by nobody, and a real one starts
  // nothing; a mirror's progress is Velero's to see
  const mirrored = deps.dispatcher.velero !== undefined && isMirror(resource);
  return { follow: mirrored || mayStartSomething({ resource: resource as Resource, old: old as Resource }) };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reads the object the allowed change is about, and once the apiserver has stored the change, calls `act` with
 * what it read (after the answer: the change is not stored before). Nothing when the review matches no stored
 * object, when the change never gets stored, or on a dry run.
 */
async function follow(
  req: AdmissionRequest,
  kind: KindName,
  deps: HandlerDeps,
  act: (change: StoredChange) => Promise<unknown>,
  whatFor: string,
  started = Date.now(),
): Promise<void> {
  if (req.dryRun) return;
  const watched = await within(deps.changes.watch(req, kind), deps.budgetMs - (Date.now() - started)).catch(
    (err) =>
      void deps.log.warn(`could not read the object of a review; ${whatFor}`, {
        kind,
        namespace: req.namespace,
        name: req.name,
        error: message(err),
      }),
  );
  if (!watched) return;
  const onError = (err: unknown): void =>
    deps.log.warn(`could not act on a stored change; ${whatFor}`, {
      kind,
      namespace: req.namespace,
      name: req.name,
      error: message(err),
    });
  if (!deps.changes.follow(watched, act, onError))
    deps.log.warn(`too many changes are waiting to be stored; ${whatFor}`, {
      kind,
      namespace: req.namespace,
      name: req.name,
    });
}

/** A BackupSchedule has no phases: check it, and let a new generation (or a deletion) start what it needs. */
async function answerSchedule(req: AdmissionRequest, deps: HandlerDeps): Promise<AdmissionResponse> {
  if (req.operation === 'CREATE' || req.operation === 'UPDATE') {
    const denial = checkSchedule(req.object, req.subResource === 'status' ? 'status' : 'spec');
    if (denial) return deny(req.uid, denial);
  }
  // a status write starts nothing
  if (!req.subResource)
    await follow(req, 'BackupSchedule', deps, (change) => scheduleChanged(change, deps), 'the sweep will act on it');
  return allow(req.uid);
}

/** A storage location's spec is checked (./location-rules.ts); a new spec starts the maintenance reconcile. */
async function answerLocation(req: AdmissionRequest, deps: HandlerDeps): Promise<AdmissionResponse> {
  // locations elsewhere are not ferry's, and a status write starts nothing
  if (req.namespace === deps.namespace && !req.subResource) {
    if (req.operation === 'CREATE' || req.operation === 'UPDATE') {
      const next = asResource('BackupStorageLocation', req.object);
      const denial = isDenial(next)
        ? next
        : checkLocation(next, req.operation === 'UPDATE' ? (req.oldObject as { spec?: unknown }) : undefined);
      if (denial) return deny(req.uid, denial);
    }
    await follow(
      req,
      'BackupStorageLocation',
      deps,
      (change) => locationChanged(change, deps),
      'the periodic maintenance reconcile will act on it',
    );
  }
  return allow(req.uid);
}

/** Velero's objects are never denied here (their webhook fails open); a change of one ferry should do is followed. */
async function answerVelero(req: AdmissionRequest, deps: HandlerDeps): Promise<AdmissionResponse> {
  const bridge = deps.dispatcher.velero;
  const kind = req.kind.kind;
  const ours = bridge && req.namespace === bridge.namespace && (kind === 'DataUpload' || kind === 'DataDownload');
  if (!ours || req.subResource) return allow(req.uid);
  await follow(
    req,
    kind === 'DataUpload' ? 'VeleroDataUpload' : 'VeleroDataDownload',
    deps,
    ({ before, after }) =>
      bridge.veleroChanged(kind, after as VeleroObject | undefined, before as VeleroObject | undefined),
    'the sweep will act on it',
  );
  return allow(req.uid);
}

/** The verdict of `judging`, or a denial saying why there is none within the budget. */
async function judgedWithin(kind: string, deps: HandlerDeps, judging: Promise<Verdict>): Promise<Verdict> {
  try {
    return await within(judging, deps.budgetMs);
  } catch (err) {
    const why =
      err instanceof OutOfTime
        ? `the apiserver did not answer within ${deps.budgetMs} ms`
        : err instanceof Error
          ? err.message
          : String(err);
    return {
      denial: { code: 422, reason: 'Invalid', message: `ferry could not check this ${kind} (${why}); try again` },
    };
  }
}

async function judgeApp(req: AdmissionRequest, kind: AppKind, deps: HandlerDeps): Promise<Verdict> {
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return {};
  const resource = asResource<AppResource>(kind, req.object);
  if (isDenial(resource)) return { denial: resource };
  if (req.operation === 'CREATE') return { denial: await checkAppCreate(deps.kube, deps.namespace, resource) };
  const old = asResource<AppResource>(kind, req.oldObject);
  if (isDenial(old)) return { denial: invalid(`oldObject: ${old.message}`) };
  return { denial: checkAppUpdate(old, resource, req.subResource) };
}

/**
 * An AppBackup or AppRestore: checked, and once stored, a creation (or a deletion or cancel of an unfinished one
 * whose step is not running) starts its step Job (./app.ts); a status write starts nothing.
 */
async function answerApp(req: AdmissionRequest, kind: AppKind, deps: HandlerDeps): Promise<AdmissionResponse> {
  const started = Date.now();
  const verdict = await judgedWithin(kind, deps, judgeApp(req, kind, deps));
  if (verdict.denial) return deny(req.uid, verdict.denial);
  if (!req.subResource && req.operation !== 'CONNECT') {
    const context = deps.dispatcher.context;
    await follow(req, kind, deps, (change) => appChanged(change, context), 'the sweep will act on it', started);
  }
  return allow(req.uid);
}

/**
 * A DataCopy or CopyPolicy: checked (./copy-rules.ts). Once stored, a DataCopy's creation (or its deletion or cancel
 * while no attempt runs) starts its copy step (./copy.ts); a status write starts nothing.
 */
async function answerCopy(req: AdmissionRequest, kind: CopyKind, deps: HandlerDeps): Promise<AdmissionResponse> {
  const started = Date.now();
  const judging = judgeCopyReview(req, kind, deps.kube, deps.namespace).then((denial) => ({ denial }));
  const verdict = await judgedWithin(kind, deps, judging);
  if (verdict.denial) return deny(req.uid, verdict.denial);
  if (kind === 'DataCopy' && !req.subResource && req.operation !== 'CONNECT') {
    const context = deps.dispatcher.context;
    await follow(req, kind, deps, (change) => copyChanged(change, context), 'the sweep will act on it', started);
  }
  return allow(req.uid);
}

async function answer(req: AdmissionRequest, deps: HandlerDeps): Promise<AdmissionResponse> {
  const kind = req.kind.kind;
  if (req.kind.group === veleroGroup) return answerVelero(req, deps);
  if (req.kind.group === group && isAppKind(kind)) return answerApp(req, kind, deps);
  if (req.kind.group === group && isCopyKind(kind)) return answerCopy(req, kind, deps);
  if (req.kind.group === group && kind === 'BackupSchedule') return answerSchedule(req, deps);
  if (req.kind.group === group && kind === 'BackupStorageLocation') return answerLocation(req, deps);
  if (req.kind.group !== group || !kinds.includes(kind)) {
    return allow(req.uid, [`ferry's dispatcher does not validate ${req.kind.group}/${kind}; check the webhook rules`]);
  }
  const started = Date.now();
  const verdict = await judgedWithin(kind, deps, judge(req, kind as ResourceKind, deps));
  if (verdict.denial) return deny(req.uid, verdict.denial);
  if (verdict.follow) {
    const act = async ({ before, after }: StoredChange): Promise<void> => {
      if (!after) return;
      await deps.dispatcher.admitted({ resource: after as Resource, old: before as Resource | undefined });
      if (isMirror(after as Resource)) await deps.dispatcher.velero?.mirrorChanged(after as Resource);
      const upload = after as Resource;
      if (turnedCompleted(before as Resource | undefined, upload)) {
        const { kube, namespace, now } = deps.dispatcher.context;
        const made = await copyCompleted({ kube, namespace, now }, upload);
        for (const error of made.errors) deps.log.warn('could not make a copy; the sweep will', { error });
      }
    };
    await follow(req, kind as ResourceKind, deps, act, 'the sweep will act on it', started);
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
    response = deny(
      req.uid,
      invalid(`ferry's dispatcher failed on this request: ${err instanceof Error ? err.message : String(err)}`),
    );
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const labels = { kind, operation: req.subResource ? `${req.operation}/${req.subResource}` : req.operation };
  deps.metrics.admissions.inc({ ...labels, result: response.allowed ? 'allowed' : 'denied' });
  deps.metrics.latency.observe({ kind }, seconds);
  if (!response.allowed) {
    deps.metrics.denials.inc({ kind, reason: response.status?.reason ?? 'Unknown' });
    deps.log.info('denied', {
      kind,
      namespace: req.namespace,
      name: req.name,
      operation: labels.operation,
      message: response.status?.message,
    });
  }
  return { status: 200, review: reviewResponse(response) };
}
