// Is the dispatcher running, and does the apiserver reach it? A dry-run create of a DataUpload goes through the
// webhook exactly as a real one would, and stores nothing; the probe names a storage location that does not exist,
// so the dispatcher's denial proves the path apiserver -> webhook -> dispatcher works.
import { KubeError } from '../../shared/kube/errors.ts';
import type { HttpKube } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { resourcePath } from '../../shared/kube/resources.ts';
import { ok, problem, warning, type Finding, type Install } from './finding.ts';

const area = 'dispatcher';
export const dispatcherSelector = 'app.kubernetes.io/component=dispatcher';

interface Deployment extends KubeObject {
  spec: { replicas?: number };
  status?: { availableReplicas?: number; readyReplicas?: number };
}

async function checkDeployments(kube: HttpKube, install: Install): Promise<Finding[]> {
  const deployments = await kube.list<Deployment>('Deployment', {
    namespace: install.namespace,
    labelSelector: dispatcherSelector,
  });
  if (deployments.length === 0) {
    return [
      problem(
        area,
        'deployment',
        `No dispatcher Deployment (label ${dispatcherSelector}) in namespace ${install.namespace}.`,
        'Run `ferry install`.',
      ),
    ];
  }
  return deployments.map((d) => {
    const available = d.status?.availableReplicas ?? 0;
    const wanted = d.spec.replicas ?? 1;
    if (available === 0) {
      return problem(
        area,
        d.metadata.name,
        `Deployment ${install.namespace}/${d.metadata.name} has no available replica (0 of ${wanted}).`,
        `Look at its pods: kubectl -n ${install.namespace} describe deployment ${d.metadata.name}; kubectl -n ${install.namespace} logs deployment/${d.metadata.name}.`,
      );
    }
    return ok(
      area,
      d.metadata.name,
      `Deployment ${install.namespace}/${d.metadata.name} has ${available} of ${wanted} replicas available.`,
    );
  });
}

/** A DataUpload the webhook must judge; the dry run keeps it from being stored or acted on. */
function probeUpload(namespace: string): KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name: 'ferry-doctor-probe', namespace, labels: { 'app.kubernetes.io/name': 'ferry-doctor' } },
    spec: { sourcePVC: 'ferry-doctor-probe', backupStorageLocation: 'ferry-doctor-probe' },
  };
}

async function checkWebhookAnswers(kube: HttpKube, install: Install): Promise<Finding> {
  const subject = `webhook ${install.webhook}`;
  try {
    await kube.call(
      'POST',
      `${resourcePath('DataUpload', install.namespace)}?dryRun=All`,
      probeUpload(install.namespace),
    );
    // the probe names a location that does not exist, which the dispatcher always denies
    return problem(
      area,
      subject,
      'A dry-run DataUpload naming a missing storage location was allowed: the dispatcher did not judge it.',
      `Run \`ferry install\`: the ValidatingWebhookConfiguration ${install.webhook} must send DataUploads to the dispatcher.`,
    );
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/admission webhook "[^"]*" denied/.test(message))
      return ok(
        area,
        subject,
        'The dispatcher judged a dry-run DataUpload through the webhook (it denied the probe, as it should).',
      );
    if (/failed calling webhook/.test(message)) {
      const tls = /x509|certificate/i.test(message);
      return problem(
        area,
        subject,
        `The apiserver could not call the dispatcher's webhook: ${message.replace(/^[A-Z]+ \S+ failed: /, '')}`,
        tls
          ? "The webhook's caBundle does not match the dispatcher's certificate: see the webhook-ca findings."
          : `Check that the dispatcher's pods are ready and that the webhook's clientConfig points at them (kubectl -n ${install.namespace} get pods -l ${dispatcherSelector}).`,
      );
    }
    if (err instanceof KubeError && err.status === 403)
      return warning(
        area,
        subject,
        `Could not test the webhook: you may not create DataUploads in ${install.namespace} (${err.message}).`,
        'Run ferry doctor with rights to create DataUploads (a dry run stores nothing).',
      );
    return problem(
      area,
      subject,
      `A dry-run DataUpload failed without the dispatcher's answer: ${message}`,
      'Run `ferry install`, then check the CRDs and the webhook configuration.',
    );
  }
}

export async function checkDispatcher(kube: HttpKube, install: Install): Promise<Finding[]> {
  return [...(await checkDeployments(kube, install)), await checkWebhookAnswers(kube, install)];
}
