// The webhook's caBundle must hold the CA that signed the dispatcher's serving certificate (the Secret its pods
// mount), that certificate must be valid now and name the host the apiserver calls; otherwise every DataUpload
// and DataDownload is refused (the webhook fails closed).
import { X509Certificate } from 'node:crypto';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { dispatcherSelector } from './dispatcher.ts';
import { ok, problem, type Finding, type Install } from './finding.ts';

const area = 'webhook-ca';

interface WebhookConfiguration extends KubeObject {
  webhooks?: {
    name: string;
    clientConfig: { caBundle?: string; url?: string; service?: { name: string; namespace: string } };
  }[];
}

interface Deployment extends KubeObject {
  spec: {
    template: {
      spec: {
        volumes?: { name: string; secret?: { secretName?: string } }[];
        containers: { volumeMounts?: { name: string; mountPath: string }[] }[];
      };
    };
  };
}

/** Every certificate in a PEM bundle. */
export function certificates(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

/** Why `bundle` does not vouch for `leaf` at `host` now, or undefined when it does. */
export function trustProblem(
  bundle: X509Certificate[],
  leaf: X509Certificate,
  host: string,
  now = new Date(),
): string | undefined {
  if (bundle.length === 0) return 'holds no certificate';
  const signer = bundle.find(
    (ca) => ca.fingerprint256 === leaf.fingerprint256 || (leaf.checkIssued(ca) && leaf.verify(ca.publicKey)),
  );
  if (!signer)
    return `does not hold the CA that signed the serving certificate (issuer "${leaf.issuer.replace(/\n/g, ', ')}"; the bundle holds ${bundle.map((c) => `"${c.subject.replace(/\n/g, ', ')}"`).join(', ')})`;
  if (Date.parse(leaf.validTo) < now.getTime())
    return `vouches for a serving certificate that expired on ${leaf.validTo}`;
  if (Date.parse(leaf.validFrom) > now.getTime())
    return `vouches for a serving certificate that is valid only from ${leaf.validFrom}`;
  const named = /^[\d.]+$|:/.test(host) ? leaf.checkIP(host) : leaf.checkHost(host);
  if (!named)
    return `vouches for a serving certificate that does not name ${host} (${leaf.subjectAltName ?? leaf.subject})`;
  return undefined;
}

/** The Secrets holding the dispatchers' serving certificates: the secret volume mounted where they read TLS. */
async function servingSecrets(kube: Kube, namespace: string): Promise<string[]> {
  const deployments = await kube.list<Deployment>('Deployment', { namespace, labelSelector: dispatcherSelector });
  const names = new Set<string>();
  for (const d of deployments) {
    const { volumes = [], containers } = d.spec.template.spec;
    const mounted = new Set(
      containers
        .flatMap((c) => c.volumeMounts ?? [])
        .filter((m) => /tls/i.test(m.mountPath) || /tls/i.test(m.name))
        .map((m) => m.name),
    );
    for (const v of volumes) if (v.secret?.secretName && mounted.has(v.name)) names.add(v.secret.secretName);
  }
  return [...names];
}

function hostOf(clientConfig: NonNullable<WebhookConfiguration['webhooks']>[number]['clientConfig']): string {
  if (clientConfig.url) return new URL(clientConfig.url).hostname.replace(/^\[|\]$/g, '');
  const s = clientConfig.service;
  return s ? `${s.name}.${s.namespace}.svc` : '';
}

export async function checkWebhookCa(kube: Kube, install: Install): Promise<Finding[]> {
  const config = await kube.get<WebhookConfiguration>({
    kind: 'ValidatingWebhookConfiguration',
    name: install.webhook,
  });
  if (!config)
    return [
      problem(
        area,
        install.webhook,
        `ValidatingWebhookConfiguration ${install.webhook} does not exist.`,
        'Run `ferry install`.',
      ),
    ];
  const secrets = await servingSecrets(kube, install.namespace);
  if (secrets.length === 0)
    return [
      problem(
        area,
        install.webhook,
        `No dispatcher in ${install.namespace} mounts a serving certificate Secret.`,
        'Run `ferry install`.',
      ),
    ];
  const leaves: { secret: string; leaf: X509Certificate }[] = [];
  const findings: Finding[] = [];
  for (const name of secrets) {
    const secret = await kube.get<KubeObject & { data?: Record<string, string> }>({
      kind: 'Secret',
      namespace: install.namespace,
      name,
    });
    const crt = secret?.data?.['tls.crt'];
    if (!crt) {
      findings.push(
        problem(
          area,
          name,
          `The dispatcher's serving certificate Secret ${install.namespace}/${name} ${secret ? 'has no tls.crt' : 'does not exist'}.`,
          'Create it (kubernetes.io/tls) with a certificate for the webhook host, or enable the cert-manager component of deploy/.',
        ),
      );
      continue;
    }
    leaves.push({ secret: name, leaf: certificates(Buffer.from(crt, 'base64').toString('utf8'))[0] });
  }
  for (const hook of config.webhooks ?? []) {
    const subject = `${install.webhook}/${hook.name}`;
    const bundle = hook.clientConfig.caBundle
      ? certificates(Buffer.from(hook.clientConfig.caBundle, 'base64').toString('utf8'))
      : [];
    if (!hook.clientConfig.caBundle) {
      findings.push(
        problem(
          area,
          subject,
          `Webhook ${hook.name} has no caBundle, so the apiserver cannot trust the dispatcher.`,
          `Set clientConfig.caBundle to the base64 PEM of the CA that signed Secret ${secrets[0]}'s tls.crt, or enable the cert-manager component of deploy/ to inject it.`,
        ),
      );
      continue;
    }
    const host = hostOf(hook.clientConfig);
    for (const { secret, leaf } of leaves) {
      const why = trustProblem(bundle, leaf, host);
      if (why)
        findings.push(
          problem(
            area,
            subject,
            `The caBundle of webhook ${hook.name} ${why}; the certificate is Secret ${install.namespace}/${secret}.`,
            `Set clientConfig.caBundle of ${install.webhook} to the base64 PEM of the CA that signed ${secret}'s tls.crt (or renew the certificate), or let cert-manager inject it.`,
          ),
        );
      else
        findings.push(
          ok(
            area,
            subject,
            `The caBundle of webhook ${hook.name} vouches for Secret ${secret}'s certificate for ${host} (valid until ${leaf.validTo}).`,
          ),
        );
    }
  }
  return findings;
}
