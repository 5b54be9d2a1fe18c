// The dispatcher's settings: one table, each with its environment variable, its flag and its default. A flag wins
// over the variable, the variable over the default. Deploy manifests set the variables (deploy/config.yaml).

export interface DispatcherConfig {
  namespace: string;
  port: number;
  path: string;
  tlsCert: string;
  tlsKey: string;
  /** PEM CA file that must have signed a caller's client certificate; empty: callers are not asked for one */
  clientCA: string;
  /** common names a caller's certificate may have; empty: any the client CA signed */
  clientNames: string[];
  metricsPort: number;
  maxTransfers: number;
  maxTransfersPerNode: number;
  maxAttempts: number;
  apiTimeoutMs: number;
  budgetMs: number;
  /** Velero's namespace when ferry is Velero's data mover; empty: it is not */
  veleroNamespace: string;
}

type Key = keyof DispatcherConfig;

interface Setting {
  key: Key;
  env: string;
  flag: string;
  kind: 'text' | 'optional' | 'list' | 'count' | 'port' | 'ms';
  default: string;
  description: string;
}

export const settings: readonly Setting[] = [
  {
    key: 'namespace',
    env: 'FERRY_NAMESPACE',
    flag: 'namespace',
    kind: 'text',
    default: 'ferry-system',
    description: "ferry's namespace: Job templates, Jobs, locations",
  },
  {
    key: 'port',
    env: 'FERRY_WEBHOOK_PORT',
    flag: 'port',
    kind: 'port',
    default: '8443',
    description: 'HTTPS port of the admission webhook',
  },
  {
    key: 'path',
    env: 'FERRY_WEBHOOK_PATH',
    flag: 'path',
    kind: 'text',
    default: '/validate',
    description: 'URL path of the admission webhook',
  },
  {
    key: 'tlsCert',
    env: 'FERRY_TLS_CERT',
    flag: 'tls-cert',
    kind: 'text',
    default: '/etc/ferry/tls/tls.crt',
    description: 'PEM certificate file of the webhook (re-read when it changes)',
  },
  {
    key: 'tlsKey',
    env: 'FERRY_TLS_KEY',
    flag: 'tls-key',
    kind: 'text',
    default: '/etc/ferry/tls/tls.key',
    description: 'PEM key file of the webhook',
  },
  {
    key: 'clientCA',
    env: 'FERRY_CLIENT_CA',
    flag: 'client-ca',
    kind: 'optional',
    default: '',
    description:
      'PEM CA file: when set, only callers with a client certificate it signed are served (the apiserver, configured to present one); unset: any caller',
  },
  {
    key: 'clientNames',
    env: 'FERRY_CLIENT_NAMES',
    flag: 'client-names',
    kind: 'list',
    default: '',
    description:
      'comma-separated common names a client certificate may have (with FERRY_CLIENT_CA); unset: any the CA signed',
  },
  {
    key: 'metricsPort',
    env: 'FERRY_METRICS_PORT',
    flag: 'metrics-port',
    kind: 'port',
    default: '8080',
    description: 'plain HTTP port of /healthz, /readyz and /metrics',
  },
  {
    key: 'maxTransfers',
    env: 'FERRY_MAX_TRANSFERS',
    flag: 'max-transfers',
    kind: 'count',
    default: '0',
    description: 'transfers at once in the cluster (0: no limit)',
  },
  {
    key: 'maxTransfersPerNode',
    env: 'FERRY_MAX_TRANSFERS_PER_NODE',
    flag: 'max-transfers-per-node',
    kind: 'count',
    default: '0',
    description: 'transfers at once per node (0: no limit)',
  },
  {
    key: 'maxAttempts',
    env: 'FERRY_MAX_ATTEMPTS',
    flag: 'max-attempts',
    kind: 'count',
    default: '3',
    description: 'Jobs of one step before the resource is given up',
  },
  {
    key: 'apiTimeoutMs',
    env: 'FERRY_API_TIMEOUT_MS',
    flag: 'api-timeout-ms',
    kind: 'ms',
    default: '3000',
    description: 'timeout of each apiserver request',
  },
  {
    key: 'budgetMs',
    env: 'FERRY_ADMISSION_BUDGET_MS',
    flag: 'admission-budget-ms',
    kind: 'ms',
    default: '7000',
    description: 'time to check a review (and read the object it names) before answering anyway',
  },
  {
    key: 'veleroNamespace',
    env: 'FERRY_VELERO_NAMESPACE',
    flag: 'velero-namespace',
    kind: 'optional',
    default: '',
    description:
      "Velero's namespace: ferry then does Velero's DataUploads and DataDownloads there that name it as data mover (deploy/velero); empty: it does not",
  },
];

function parse(setting: Setting, raw: string, source: string): string | number | string[] {
  if (setting.kind === 'optional') return raw;
  if (setting.kind === 'list')
    return raw
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  if (setting.kind === 'text') {
    if (raw === '') throw new Error(`${source} must not be empty.`);
    return raw;
  }
  const n = Number(raw);
  const ok =
    Number.isInteger(n) &&
    n >= 0 &&
    (setting.kind !== 'port' || (n >= 1 && n <= 65535)) &&
    (setting.kind !== 'ms' || n >= 1);
  if (!ok) {
    const allowed =
      setting.kind === 'port'
        ? 'a port number (1-65535)'
        : setting.kind === 'ms'
          ? 'a whole number of milliseconds above 0'
          : 'a whole number, 0 or more';
    throw new Error(`${source} must be ${allowed}, not "${raw}".`);
  }
  return n;
}

/** The settings from flags (by flag name, without dashes in front) and the environment. */
export function loadConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): DispatcherConfig {
  const out: Record<string, string | number | string[]> = {};
  for (const s of settings) {
    const flag = flags[s.flag];
    if (flag !== undefined && flag !== '') out[s.key] = parse(s, String(flag), `--${s.flag}`);
    else if (env[s.env] !== undefined && env[s.env] !== '') out[s.key] = parse(s, env[s.env] as string, s.env);
    else out[s.key] = parse(s, s.default, `the default of ${s.env}`);
  }
  const config = out as unknown as DispatcherConfig;
  if (!config.path.startsWith('/')) throw new Error(`FERRY_WEBHOOK_PATH must start with "/", not "${config.path}".`);
  if (config.clientNames.length && !config.clientCA)
    throw new Error(
      'FERRY_CLIENT_NAMES needs FERRY_CLIENT_CA: names are checked on client certificates, which only a client CA asks for.',
    );
  return config;
}
