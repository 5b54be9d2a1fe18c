// `ferry install`: deploy/ (with jobs/ and policies/) rendered as kustomize would, moved to the chosen namespace and
// image, then printed (--dry-run), checked by the apiserver without storing anything (--server-dry-run), or applied
// with server-side apply, as `kubectl apply --server-side -k deploy/` would.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { toYaml } from '../../shared/api/yaml.ts';
import { applyAll, describeObject } from '../../shared/install/apply.ts';
import { defaultNamespace, renderInstall } from '../../shared/install/install.ts';
import { HttpKube } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { kubeArgs, kubeConfigFrom } from '../resource/kube.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import { UsageError } from '../run.ts';

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A namespace given by `flag`, checked as the apiserver would. */
function namespaceFlag(flag: string, ns: string): string {
  if (ns.length > 63 || !dnsLabel.test(ns))
    throw new UsageError(`${flag} "${ns}" is not a namespace name: lower-case letters, digits and '-', at most 63`);
  return ns;
}

function veleroFlag(velero: boolean, value: string | undefined): string | undefined {
  if (value !== undefined && !velero) throw new UsageError('--velero-namespace needs --velero');
  return velero ? namespaceFlag('--velero-namespace', value ?? 'velero') : undefined;
}

async function render(image: string | undefined, namespace: string, veleroNamespace?: string): Promise<KubeObject[]> {
  try {
    return await renderInstall({ image, namespace, veleroNamespace });
  } catch (err) {
    if (image !== undefined && /is not an image reference/.test((err as Error).message))
      throw new UsageError(`--image: ${(err as Error).message}`);
    throw err;
  }
}

function asYamlStream(objects: readonly KubeObject[]): string {
  return objects.map((o) => toYaml(o)).join('---\n');
}

/** The webhook needs the CA of the dispatcher's certificate; install cannot know it, so it says what is missing. */
function caBundleMissing(objects: readonly KubeObject[], applied: Map<string, KubeObject>): boolean {
  return objects
    .filter((o) => o.kind === 'ValidatingWebhookConfiguration')
    .some((webhook) => {
      const hooks = (applied.get(describeObject(webhook))?.webhooks ?? []) as {
        clientConfig?: { caBundle?: string };
      }[];
      return hooks.some((h) => !h.clientConfig?.caBundle);
    });
}

export default defineCommand({
  meta: {
    name: 'install',
    description: 'Install or upgrade ferry in a cluster from deploy/ (CRDs, dispatcher, webhook, RBAC, Job templates)',
  },
  args: {
    'dry-run': {
      type: 'boolean',
      description: 'print the manifests (YAML, or -o json) instead of applying them',
      default: false,
    },
    'server-dry-run': {
      type: 'boolean',
      description: 'send everything to the apiserver as a dry run: validated and merged, nothing stored',
      default: false,
    },
    image: {
      type: 'string',
      description: "ferry's image, REGISTRY/NAME[:TAG][@DIGEST] (default: the one deploy/ names)",
      valueHint: 'IMAGE',
    },
    namespace: {
      type: 'string',
      alias: 'n',
      description: `namespace for ferry (default ${defaultNamespace})`,
      valueHint: 'NS',
    },
    velero: {
      type: 'boolean',
      description:
        "also make ferry Velero's data mover (deploy/velero): `velero backup create --snapshot-move-data --data-mover ferry`",
      default: false,
    },
    'velero-namespace': {
      type: 'string',
      description: "Velero's namespace, with --velero (default velero)",
      valueHint: 'NS',
    },
    kubeconfig: kubeArgs.kubeconfig,
    context: kubeArgs.context,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const namespace = namespaceFlag('--namespace', args.namespace ?? defaultNamespace);
    if (args['dry-run'] && args['server-dry-run'])
      throw new UsageError('--dry-run and --server-dry-run exclude each other');
    const veleroNamespace = veleroFlag(args.velero, args['velero-namespace']);
    const objects = await render(args.image, namespace, veleroNamespace);
    if (args['dry-run']) {
      if (format === 'json') printDocument({ apiVersion: 'v1', kind: 'List', items: objects, metadata: {} }, 'json');
      else process.stdout.write(asYamlStream(objects));
      return;
    }
    const kube = new HttpKube(kubeConfigFrom(args));
    const applied = new Map<string, KubeObject>();
    const dryRun = args['server-dry-run'];
    try {
      if (dryRun && !(await kube.get({ kind: 'Namespace', name: namespace }))) {
        throw new Error(
          `Namespace ${namespace} does not exist, and a dry run creates nothing, so the objects in it cannot be checked: create it first.`,
        );
      }
      await applyAll(kube, objects, {
        dryRun,
        onApplied: (obj, live) => {
          applied.set(describeObject(obj), live);
          if (!isDocument(format)) consola.log(`${describeObject(obj)} ${dryRun ? 'checked (dry run)' : 'applied'}`);
        },
      });
    } finally {
      kube.close();
    }
    if (isDocument(format)) {
      printDocument({ namespace, dryRun, applied: [...applied.keys()] }, format);
      return;
    }
    consola.success(
      `${applied.size} objects ${dryRun ? 'accepted by the apiserver (dry run, nothing stored)' : `applied; ferry is installed in ${namespace}`}`,
    );
    if (veleroNamespace) {
      consola.info(
        `ferry serves Velero's DataUploads and DataDownloads in ${veleroNamespace} that name it as data mover. Give one ferry BackupStorageLocation spec.velero.backupStorageLocation (the name of Velero's location), with s3 in the same bucket under <Velero's prefix>/plugins/ferry; ferry doctor checks it.`,
      );
    }
    if (caBundleMissing(objects, applied)) {
      consola.warn(
        "The webhook has no caBundle yet: enable deploy/cert-manager, or create Secret ferry-dispatcher-tls and set the webhook's caBundle to its CA (ferry doctor checks both).",
      );
    }
  },
});
