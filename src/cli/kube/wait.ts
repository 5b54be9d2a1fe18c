// --wait: follows a resource until its phase is an end, showing its phase and progress (a bar on a terminal,
// plain lines otherwise), and turns the end into the exit code: Completed 0, Failed 1, Canceled 3.
import { terminalPhases } from '../../shared/api/phases.ts';
import type { DataCopy } from '../../shared/api/copy.ts';
import type { Condition, Progress, ResourceKind } from '../../shared/api/types.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { sleep } from '../../engine/concurrency/sleep.ts';
import { isTransient } from '../../shared/kube/errors.ts';
import { progressReporter, type ProgressFigures, type ProgressReporter } from '../output.ts';
import { CanceledError } from '../run.ts';
import { nouns, type Resource } from './kinds.ts';

/** What --wait follows: a backup, a restore, or a copy of a backup (`ferry copy --wait`). */
export type FollowedKind = ResourceKind | 'DataCopy';

/** The status fields --wait reads, which every followed kind has. */
export interface Followed extends KubeObject {
  status?: { phase?: string; progress?: Progress; message?: string; conditions?: Condition[] };
}

/** how long the apiserver may stay unreachable before --wait gives up */
const unreachableLimitMs = 2 * 60_000;

/** A resource's status.progress as the progress line shows it: the step's own percent wins over done/total. */
export function progressFigures(p: Progress | undefined): ProgressFigures {
  const bytesTotal = p?.totalBytes ?? 0;
  return { bytesDone: p?.bytesDone ?? 0, bytesTotal, totalsFinal: bytesTotal > 0, percent: p?.percent };
}

export interface WaitOptions {
  /** no progress output (the result goes to stdout as a document) */
  quiet: boolean;
  pollMs?: number;
}

/** exit code after Ctrl-C: 128 + SIGINT, as shells report it */
export const interruptedExit = 130;

/** What Ctrl-C during a wait says: the work goes on in the cluster, and how to follow or stop it. */
export function interruptedMessage(kind: FollowedKind, namespace: string, name: string, phase: string): string {
  if (kind === 'DataCopy')
    return (
      `Stopped following DataCopy ${namespace}/${name}; it is still running in the cluster (phase ${phase}). ` +
      `Follow it again with \`ferry copies wait ${name} -n ${namespace}\`.`
    );
  const noun = nouns[kind];
  return (
    `Stopped following ${noun} ${namespace}/${name}; it is still running in the cluster (phase ${phase}). ` +
    `Follow it again with \`ferry ${noun} wait ${name} -n ${namespace}\`, or stop it with \`ferry cancel ${noun}/${name} -n ${namespace}\`.`
  );
}

/** The resource once it ends; throws (exit 1) when it failed or vanished, CanceledError (exit 3) when canceled. */
export async function waitForEnd(
  kube: Kube,
  kind: ResourceKind,
  namespace: string,
  name: string,
  opts: WaitOptions,
): Promise<Resource>;
export async function waitForEnd(
  kube: Kube,
  kind: 'DataCopy',
  namespace: string,
  name: string,
  opts: WaitOptions,
): Promise<DataCopy & KubeObject>;
export async function waitForEnd(
  kube: Kube,
  kind: FollowedKind,
  namespace: string,
  name: string,
  opts: WaitOptions,
): Promise<Followed> {
  const progress = progressReporter(opts.quiet);
  let phase = 'New';
  // Ctrl-C stops the following, not the work: say so, rather than leave the user to think it stopped too
  const interrupted = () => {
    progress.done();
    process.stderr.write(`${interruptedMessage(kind, namespace, name, phase)}\n`);
    process.exit(interruptedExit);
  };
  process.once('SIGINT', interrupted);
  try {
    return await follow(kube, kind, namespace, name, opts, progress, (p) => (phase = p));
  } finally {
    process.off('SIGINT', interrupted);
  }
}

async function follow(
  kube: Kube,
  kind: FollowedKind,
  namespace: string,
  name: string,
  opts: WaitOptions,
  progress: ProgressReporter,
  seen: (phase: string) => void,
): Promise<Followed> {
  let unreachableSince: number | undefined;
  for (;;) {
    let r: Followed | undefined;
    try {
      r = await kube.get<Followed>({ kind, namespace, name });
      unreachableSince = undefined;
    } catch (err) {
      // a long wait outlives an apiserver restart; the resource goes on meanwhile
      unreachableSince ??= Date.now();
      if (!isTransient(err) || Date.now() - unreachableSince > unreachableLimitMs) {
        progress.done();
        throw err;
      }
      await sleep(opts.pollMs ?? 1000);
      continue;
    }
    if (!r) {
      progress.done();
      throw new Error(`${kind} ${namespace}/${name} was deleted while waiting for it to finish.`);
    }
    const phase = r.status?.phase ?? 'New';
    seen(phase);
    const ended = (terminalPhases as readonly string[]).includes(phase);
    progress.update(progressFigures(r.status?.progress), phase, ended);
    if (ended) {
      progress.done();
      const why = r.status?.message ? `: ${r.status.message}` : '.';
      if (phase === 'Failed') throw new Error(`${kind} ${namespace}/${name} failed${why}`);
      if (phase === 'Canceled') throw new CanceledError(`${kind} ${namespace}/${name} was canceled${why}`);
      return r;
    }
    await sleep(opts.pollMs ?? 1000);
  }
}
