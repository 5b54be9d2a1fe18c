// Creating a DataUpload or DataDownload, with the apiserver's refusals told in the CLI's terms: a webhook denial
// naming a spec field the user set through a flag is bad usage (exit 2) naming that flag; a missing namespace is
// said as such.
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { KubeError } from '../../shared/kube/errors.ts';
import { UsageError } from '../run.ts';

/** Which flag set which spec field, e.g. { 'spec.sourcePVC': '--pvc' }. */
export type FieldFlags = Readonly<Record<string, string>>;

const denied = /denied the request: (.*)$/s;

export async function createResource<T extends KubeObject>(kube: Kube, obj: T, flags: FieldFlags): Promise<T> {
  try {
    return await kube.create(obj);
  } catch (err) {
    if (!(err instanceof KubeError)) throw err;
    const where = `${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}`;
    if (err.status === 404)
      throw new Error(
        `Cannot create ${where}: namespace "${obj.metadata.namespace}" does not exist, or ferry's CRDs are not installed.`,
      );
    if (err.reason === 'AlreadyExists') throw new Error(`Cannot create ${where}: one of that name already exists.`);
    const reason = denied.exec(err.message)?.[1];
    if (reason === undefined) throw err;
    // the longest field first, so spec.source.dataUpload is not taken for spec.source
    const field = Object.keys(flags)
      .sort((a, b) => b.length - a.length)
      .find((f) => reason.startsWith(`${f}:`) || reason.startsWith(`${f}.`));
    if (field) throw new UsageError(`${flags[field]}: ${reason.slice(reason.indexOf(':') + 1).trim()}`);
    throw new Error(`ferry refused ${where}: ${reason}`);
  }
}
