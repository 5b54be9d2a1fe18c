// `ferry doctor`: checks a cluster's ferry install and says, for each problem, how to fix it: CRDs (installed, at
// this ferry's version), the dispatcher (running, and answering through the webhook), the webhook's CA against the
// serving certificate, snapshot CRDs and a default VolumeSnapshotClass per CSI driver in use, and each storage
// location reachable with its credentials, and when ferry is Velero's data mover, what that needs. Exit 1 when
// anything is wrong. It changes nothing in the cluster.
import { defineCommand } from 'citty';
import { renderInstall, defaultNamespace } from '../../shared/install/install.ts';
import { HttpKube } from '../../shared/kube/client.ts';
import { KubeError } from '../../shared/kube/errors.ts';
import { kubeArgs, kubeConfigFrom } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import { checkCrds } from './crds.ts';
import { checkDispatcher } from './dispatcher.ts';
import { problem, type Finding, type Install } from './finding.ts';
import { checkLocations } from './locations.ts';
import { checkSnapshots } from './snapshots.ts';
import { checkWebhookCa } from './webhook-ca.ts';
import { checkVelero } from './velero.ts';

const marks = { ok: '✔', warning: '!', problem: '✖' } as const;

/** Findings grouped by area; -o wide adds the subject of each. */
function report(findings: readonly Finding[], wide: boolean): string {
  const lines: string[] = [];
  let area = '';
  for (const f of findings) {
    if (f.area !== area) lines.push((area = f.area));
    if (wide) lines.push(`  [${f.subject}]`);
    lines.push(`  ${marks[f.severity]} ${f.message}`);
    if (f.fix) lines.push(`      fix: ${f.fix}`);
  }
  return lines.join('\n') + '\n';
}

/** An area that could not be checked (no rights, apiserver trouble) is a problem of its own; the others still run. */
async function guarded(area: string, check: () => Promise<Finding[]>): Promise<Finding[]> {
  try {
    return await check();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const fix =
      err instanceof KubeError && err.status === 403
        ? 'Run ferry doctor with rights to read what it checks (a cluster admin, or a role that may get and list these objects).'
        : 'Check that the apiserver is reachable and answering, then run ferry doctor again.';
    return [problem(area, 'check', `Could not check ${area}: ${message}`, fix)];
  }
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((n) => objectName(n, '--location'));
}

export default defineCommand({
  meta: {
    name: 'doctor',
    description: "Check ferry's install in a cluster and say how to fix what is wrong (exit 1 when something is)",
  },
  args: {
    namespace: {
      type: 'string',
      alias: 'n',
      description: `namespace ferry is installed in (default ${defaultNamespace})`,
      valueHint: 'NS',
    },
    webhook: {
      type: 'string',
      description: 'ValidatingWebhookConfiguration to check (default: the one ferry installs)',
      valueHint: 'NAME',
    },
    location: {
      type: 'string',
      description: 'check only these storage locations, comma-separated (default: all)',
      valueHint: 'NAME,...',
    },
    kubeconfig: kubeArgs.kubeconfig,
    context: kubeArgs.context,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const namespace = objectName(args.namespace ?? defaultNamespace, '--namespace');
    const only = list(args.location);
    const rendered = await renderInstall({ namespace });
    const install: Install = {
      namespace,
      webhook:
        args.webhook === undefined
          ? (rendered.find((o) => o.kind === 'ValidatingWebhookConfiguration')?.metadata.name ?? 'ferry-dispatcher')
          : objectName(args.webhook, '--webhook'),
      crds: rendered.filter((o) => o.kind === 'CustomResourceDefinition'),
    };
    const kube = new HttpKube(kubeConfigFrom(args));
    let findings: Finding[];
    try {
      findings = [
        ...(await guarded('crds', () => checkCrds(kube, install))),
        ...(await guarded('dispatcher', () => checkDispatcher(kube, install))),
        ...(await guarded('webhook-ca', () => checkWebhookCa(kube, install))),
        ...(await guarded('snapshots', () => checkSnapshots(kube))),
        ...(await guarded('locations', () => checkLocations(kube, install, only))),
        ...(await guarded('velero', () => checkVelero(kube, install))),
      ];
    } finally {
      kube.close();
    }
    const problems = findings.filter((f) => f.severity === 'problem').length;
    const warnings = findings.filter((f) => f.severity === 'warning').length;
    if (isDocument(format)) printDocument({ healthy: problems === 0, problems, warnings, findings }, format);
    else
      process.stdout.write(
        `${report(findings, format === 'wide')}${problems === 0 ? `ferry in ${namespace} looks healthy` : `${problems} problem${problems === 1 ? '' : 's'}`}${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}.\n`,
      );
    if (problems > 0)
      throw new Error(`ferry doctor found ${problems} problem${problems === 1 ? '' : 's'} in ${namespace}.`);
  },
});
