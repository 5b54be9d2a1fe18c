// Turns decisions into Jobs and status writes. The webhook calls `admitted` for each allowed change once the
// apiserver has stored it, with the versions it read back (./stored.ts); the sweep (./sweep.ts) goes over every
// resource on a schedule. Nothing is remembered between calls and nothing comes from a review: every answer comes
// from the resources and their Jobs as the cluster shows them, so any replica (or the sweep) may act, and acting
// twice creates the same Job names.
import { labels, resourceRef, uidSelector } from '../shared/step-job/contract.ts';
import type { StepName } from '../shared/api/types.ts';
import { pastTransfer } from '../shared/api/phases.ts';
import { findCondition, rfc3339, setCondition } from '../shared/kube/conditions.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { decide } from '../shared/dispatch/decide.ts';
import type { DecideOptions, Decision } from '../shared/dispatch/decide.ts';
import { exposedClaim, startStepJob, type StartResult } from '../shared/dispatch/start.ts';
import {
  describe,
  moveToCanceling,
  writeResource,
  type Resource,
  type StatusWriter,
} from '../shared/dispatch/status.ts';
import { limited, placeTransfers } from './limits.ts';
import type { Placement, SlotHolder, TransferCandidate, TransferLimits } from './limits.ts';
import type { DispatcherMetrics } from './metrics.ts';
import { volumePlacement } from './placement.ts';
import type { VolumePlacement } from './placement.ts';
import type { ClusterNode } from './nodes.ts';
import { parseStepJobs } from '../shared/step-job/jobs.ts';
import type { StepJob } from '../shared/step-job/jobs.ts';
import { VeleroBridge } from './velero.ts';

export const queuedCondition = 'Queued';

export interface DispatcherDeps {
  kube: Kube;
  /** ferry's namespace: Job templates, Jobs and exposure objects */
  namespace: string;
  limits: TransferLimits;
  maxAttempts: number;
  /** the cluster's nodes, with their labels and whether a transfer may be pinned there; asked only under a
   * per-node limit */
  nodes: () => Promise<ClusterNode[]>;
  log: Logger;
  metrics?: DispatcherMetrics;
  now?: () => Date;
  /** name of this process in Events */
  instance?: string;
  /** Velero's namespace, when ferry is Velero's data mover; empty or absent: it is not */
  veleroNamespace?: string;
}

export type DispatchResult = StartResult;

/** A stored change: the resource as the apiserver stored it, and as it was before (absent: just created). */
export interface Change {
  resource: Resource;
  old?: Resource;
}

const settleMs = 10_000;

/** A transition that can start a step or free a transfer slot: creation, deletion, a new phase or a cancel request. */
export function mayStartSomething(change: Change): boolean {
  const { old, resource } = change;
  if (!old) return true;
  return (
    old.status?.phase !== resource.status?.phase ||
    old.spec.cancel !== resource.spec.cancel ||
    (old.metadata.deletionTimestamp === undefined) !== (resource.metadata.deletionTimestamp === undefined)
  );
}

/** A transition that ends a transfer or gives up its turn, so a waiting one may start. */
function freesSlot(change: Change): boolean {
  const before = change.old?.status?.phase;
  const after = change.resource.status?.phase;
  return (before === 'InProgress' || before === 'Prepared') && after !== before;
}

export class Dispatcher {
  readonly #d: Required<Omit<DispatcherDeps, 'metrics' | 'veleroNamespace'>> & Pick<DispatcherDeps, 'metrics'>;
  readonly #velero: VeleroBridge | undefined;
  #placing: Promise<unknown> = Promise.resolve();

  /** What the dispatcher works with, for the sweep and the dispatch of AppBackups and AppRestores (./app.ts). */
  get context(): Pick<DispatcherDeps, 'kube' | 'namespace' | 'limits' | 'log' | 'metrics'> & {
    now: () => Date;
    instance: string;
  } {
    const { kube, namespace, limits, log, metrics, now, instance } = this.#d;
    return { kube, namespace, limits, log, metrics, now, instance };
  }

  constructor(deps: DispatcherDeps) {
    this.#d = {
      now: () => new Date(),
      instance: process.env.HOSTNAME ?? 'ferry-dispatcher',
      ...deps,
    };
    const { kube, namespace, log, now } = this.#d;
    this.#velero = deps.veleroNamespace
      ? new VeleroBridge({ kube, namespace, veleroNamespace: deps.veleroNamespace, log, now })
      : undefined;
  }

  /** The Velero bridge, when ferry is Velero's data mover. */
  get velero(): VeleroBridge | undefined {
    return this.#velero;
  }

  /** How decisions are made now, in this mode. */
  decideOptions(mode: DecideOptions['mode']): DecideOptions {
    return { mode, maxAttempts: this.#d.maxAttempts, now: this.#d.now().getTime(), settleMs };
  }

  /** Acts on a change the webhook allowed, once stored (dryRun excluded). Never throws: the sweep makes up for failures. */
  async admitted(change: Change): Promise<Decision | undefined> {
    const { resource } = change;
    const log = this.#d.log.with({ resource: resourceRef(resource) });
    try {
      let decision: Decision | undefined;
      if (mayStartSomething(change)) {
        const jobs = await this.#jobsOf(resource.metadata.uid ?? '');
        decision = decide(resource, jobs, this.decideOptions('admission'));
        await this.#act(resource, decision);
      }
      const transferDue = decision?.action === 'run' && decision.step === 'transfer';
      if (limited(this.#d.limits) && (transferDue || freesSlot(change))) await this.placeTransfers('admission');
      return decision;
    } catch (err) {
      log.warn('could not dispatch; the sweep will', { error: err instanceof Error ? err.message : String(err) });
      this.#d.metrics?.dispatches.inc({ kind: resource.kind, step: 'unknown', result: 'failed' });
      return undefined;
    }
  }

  /** At admission a decision is never to give up (only the sweep counts failed attempts). */
  async #act(resource: Resource, decision: Decision): Promise<void> {
    if (decision.action === 'cancel') await this.cancel(resource, decision.why);
    // transfers wait their turn under a limit: placeTransfers starts them
    if (decision.action === 'run' && !(decision.step === 'transfer' && limited(this.#d.limits))) {
      await this.run(resource, decision.step, decision.attempt);
    }
  }

  /** Creates the step Job from its template; a Job of that name already there is success. */
  async run(resource: Resource, step: StepName, attempt: number, node?: string): Promise<DispatchResult> {
    const { result, job } = await startStepJob(this.#d.kube, this.#d.namespace, { resource, step, attempt, node });
    this.#d.metrics?.dispatches.inc({ kind: resource.kind, step, result });
    this.#d.log.info(result === 'created' ? 'step Job created' : 'step Job already there', {
      resource: describe(resource),
      job,
      node,
    });
    return result;
  }

  /** Where a waiting transfer can run: the node it already used, or the one its exposed volume is tied to. */
  async #placementOf(resource: Resource, nodes: readonly ClusterNode[]): Promise<VolumePlacement> {
    if (resource.status?.node) return { node: resource.status.node, pinnable: false };
    const claim = await exposedClaim(this.#d.kube, this.#d.namespace, resource);
    const volumeName = (claim?.spec as { volumeName?: string } | undefined)?.volumeName;
    const pv = volumeName
      ? await this.#d.kube.get<KubeObject>({ kind: 'PersistentVolume', name: volumeName })
      : undefined;
    return volumePlacement(claim, pv, nodes);
  }

  async #jobsOf(uid: string): Promise<StepJob[]> {
    return parseStepJobs(
      await this.#d.kube.list<KubeObject>('Job', { namespace: this.#d.namespace, labelSelector: uidSelector(uid) }),
    );
  }

  /** Every DataUpload and DataDownload in the cluster. */
  async resources(): Promise<Resource[]> {
    const [uploads, downloads] = await Promise.all([
      this.#d.kube.list<Resource>('DataUpload'),
      this.#d.kube.list<Resource>('DataDownload'),
    ]);
    return [...uploads, ...downloads];
  }

  /**
   * Starts the transfers that may run now, oldest first, and tells the others why they wait. One placement at a
   * time in this process: each must see the Jobs the one before it created.
   */
  placeTransfers(mode: DecideOptions['mode']): Promise<{ started: string[]; waiting: string[] }> {
    const next = this.#placing.then(() => this.#place(mode));
    this.#placing = next.catch(() => undefined);
    return next;
  }

  async #place(mode: DecideOptions['mode']): Promise<{ started: string[]; waiting: string[] }> {
    const { kube, namespace } = this.#d;
    // fresh lists, Jobs first: a transfer started meanwhile shows as a Job even if its resource looks older
    const jobs = parseStepJobs(
      await kube.list<KubeObject>('Job', { namespace, labelSelector: `${labels.step}=transfer` }),
    );
    const resources = await this.resources();
    const holders: (SlotHolder & { resource: Resource })[] = [];
    const candidates: { resource: Resource; attempt: number; candidate: TransferCandidate }[] = [];
    const options = this.decideOptions(mode);
    for (const r of resources) {
      const uid = r.metadata.uid ?? '';
      const active = jobs.find((j) => j.uid === uid && j.step === 'transfer' && j.state === 'active');
      // a started transfer holds its slot even before its resource shows Prepared (that write may still be on its
      // way); a transfer Job still running past InProgress is only exiting, and its slot is free for the next one
      if (r.status?.phase === 'InProgress' || (active && !pastTransfer(r.status?.phase)))
        holders.push({ uid, node: r.status?.node ?? active?.node, resource: r });
      const d = decide(r, jobs, options);
      if (d.action === 'run' && d.step === 'transfer') {
        candidates.push({
          resource: r,
          attempt: d.attempt,
          candidate: { uid, created: r.metadata.creationTimestamp ?? '' },
        });
      }
    }
    if (candidates.length === 0) {
      this.#queueSeen(holders.length, 0);
      return { started: [], waiting: [] };
    }
    const nodes = this.#d.limits.perNode > 0 ? await this.#d.nodes() : [];
    if (this.#d.limits.perNode > 0) {
      for (const h of holders) h.node ??= (await this.#placementOf(h.resource, nodes)).node;
      for (const c of candidates) Object.assign(c.candidate, await this.#placementOf(c.resource, nodes));
    }
    const placements = placeTransfers(
      holders,
      candidates.map((c) => c.candidate),
      this.#d.limits,
      nodes.filter((n) => n.usable).map((n) => n.name),
    );
    const started: string[] = [];
    const waiting: string[] = [];
    for (const { resource, attempt, candidate } of candidates) {
      const placement = placements.get(candidate.uid) as Placement;
      if (placement.go) {
        await this.run(resource, 'transfer', attempt, placement.node);
        started.push(describe(resource));
      } else {
        this.#d.metrics?.dispatches.inc({ kind: resource.kind, step: 'transfer', result: 'waiting' });
        waiting.push(describe(resource));
      }
      const queued = placement.go ? undefined : placement.reason;
      if (this.#queuedChanges(resource, queued)) await this.#setQueued(resource, queued);
    }
    this.#queueSeen(holders.length + started.length, waiting.length);
    return { started, waiting };
  }

  #queueSeen(transferring: number, waiting: number): void {
    this.#d.metrics?.transferring.set({}, transferring);
    this.#d.metrics?.waiting.set({}, waiting);
  }

  #queuedChanges(resource: Resource, reason: string | undefined): boolean {
    const current = findCondition(resource.status?.conditions, queuedCondition);
    return reason
      ? current?.status !== 'True' || current.message !== `Waiting for a transfer slot: ${reason}.`
      : current?.status === 'True';
  }

  async #setQueued(resource: Resource, reason: string | undefined): Promise<void> {
    await writeResource(
      this.#writer,
      resource,
      (fresh) => {
        if (fresh.status?.phase !== 'Prepared' && fresh.status?.phase !== 'InProgress') return false;
        if (!this.#queuedChanges(fresh, reason)) return false;
        const condition = reason
          ? {
              type: queuedCondition,
              status: 'True' as const,
              reason: 'ConcurrencyLimit',
              message: `Waiting for a transfer slot: ${reason}.`,
            }
          : {
              type: queuedCondition,
              status: 'False' as const,
              reason: 'Dispatched',
              message: 'A transfer slot was free; the transfer Job was created.',
            };
        fresh.status = {
          ...fresh.status,
          conditions: setCondition(fresh.status?.conditions, condition, this.#d.now()),
        };
      },
      reason
        ? { type: 'Normal', reason: 'Queued', note: `Waiting for a transfer slot: ${reason}.`, action: 'Queue' }
        : undefined,
    );
  }

  /** Moves the resource to Canceling, if it still asks for it and may still be canceled. */
  cancel(resource: Resource, why: string): Promise<void> {
    return moveToCanceling(this.#writer, resource, why);
  }

  /** Failing (or Failed) with the reason, if the resource is still where the decision found it. */
  async giveUp(resource: Resource, decision: Extract<Decision, { action: 'fail' }>): Promise<void> {
    const phaseThen = resource.status?.phase;
    await writeResource(
      this.#writer,
      resource,
      (fresh) => {
        if (fresh.status?.phase !== phaseThen) return false;
        fresh.status = { ...fresh.status, phase: decision.phase, message: decision.message };
        if (decision.phase === 'Failed') fresh.status.completionTimestamp = rfc3339(this.#d.now());
      },
      {
        type: 'Warning',
        reason: decision.phase === 'Failed' ? 'Failed' : 'Failing',
        note: decision.message,
        action: 'GiveUp',
      },
    );
  }

  get #writer(): StatusWriter {
    return { kube: this.#d.kube, log: this.#d.log, instance: this.#d.instance };
  }
}
