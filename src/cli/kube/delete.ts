// `ferry backup delete NAME` and `ferry restore delete NAME`, or every one matching `-l SELECTOR`. Deleting a
// DataUpload also frees its data in the repository: its delete step runs behind a finalizer, so with --wait the
// command returns once that is done.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import type { ResourceKind } from '../../shared/api/types.ts';
import { sleep } from '../../engine/concurrency/sleep.ts';
import type { Kube } from '../../shared/kube/kube.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { UsageError } from '../run.ts';
import { nouns } from './kinds.ts';

async function waitGone(kube: Kube, kind: ResourceKind, namespace: string, name: string): Promise<void> {
  while (await kube.get({ kind, namespace, name })) await sleep(1000);
}

/** NAME, or the selector of -l; checked before any request. */
function what(name: unknown, selector: unknown): { name: string } | { selector: string } {
  if (selector === undefined) return { name: objectName(name, 'NAME') };
  if (name !== undefined) throw new UsageError('give NAME or --selector (-l), not both');
  if (typeof selector !== 'string' || selector.trim() === '')
    throw new UsageError('--selector needs a label selector, e.g. -l app=db or -l "tier in (a,b)"');
  return { selector };
}

/** The names to delete: NAME, or those the selector matches (none is an error: a typo would delete nothing). */
async function targets(kube: Kube, kind: ResourceKind, namespace: string, given: ReturnType<typeof what>) {
  if ('name' in given) return [given.name];
  const { selector } = given;
  const found = await kube.list(kind, { namespace, labelSelector: selector });
  if (found.length === 0) throw new Error(`No ${kind}s in namespace ${namespace} match -l ${selector}.`);
  return found.map((o) => o.metadata.name).sort();
}

export function deleteCommand(kind: ResourceKind) {
  const extra = kind === 'DataUpload' ? ' and free its data in the repository' : '';
  return defineCommand({
    meta: { name: 'delete', description: `Delete a ${nouns[kind]} (${kind})${extra}, or all matching -l` },
    args: {
      name: { type: 'positional', required: false, description: `the ${kind} (or -l)`, valueHint: 'NAME' },
      selector: {
        type: 'string',
        alias: 'l',
        description: `delete every ${kind} in the namespace with these labels, e.g. -l app=db`,
        valueHint: 'SELECTOR',
      },
      wait: {
        type: 'boolean',
        description: `wait until it is gone${extra ? ' (its repository data freed)' : ''}`,
        default: false,
      },
      ...kubeArgs,
    },
    async run({ args }) {
      const given = what(args.name, args.selector);
      await withKube(args, async ({ kube, namespace }) => {
        const names = await targets(kube, kind, namespace, given);
        for (const name of names)
          if (!(await kube.delete({ kind, namespace, name })))
            throw new Error(`${kind} "${name}" not found in namespace ${namespace}.`);
        for (const name of names) {
          if (args.wait) await waitGone(kube, kind, namespace, name);
          consola.success(`${kind.toLowerCase()}/${name} ${args.wait ? 'deleted' : 'is being deleted'}`);
        }
      });
    },
  });
}
