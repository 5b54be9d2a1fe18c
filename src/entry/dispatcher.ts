#!/usr/bin/env node
// `ferry-dispatcher serve`: the admission webhook that validates DataUploads and DataDownloads and starts their
// step Jobs. `ferry-dispatcher sweep`: one pass that starts what is due, retries failed steps, gives up on those
// that failed too often and removes what deleted resources left behind (run by the ferry-sweep CronJob).
import { defineCommand } from 'citty';
import type { ArgsDef } from 'citty';
import { hostname } from 'node:os';
import { runCli } from '../cli/run.ts';
import { HttpKube } from '../shared/kube/client.ts';
import { loadKubeConfig } from '../shared/kube/config.ts';
import { createLogger } from '../shared/kube/logger.ts';
import { RetryingKube } from '../shared/kube/retry.ts';
import { loadConfig, settings } from '../dispatcher/config.ts';
import type { DispatcherConfig } from '../dispatcher/config.ts';
import { Dispatcher } from '../dispatcher/dispatcher.ts';
import { sweep as sweepOnce } from '../dispatcher/sweep.ts';
import type { DispatcherDeps } from '../dispatcher/dispatcher.ts';
import { DispatcherMetrics } from '../dispatcher/metrics.ts';
import { ScheduleMetrics } from '../dispatcher/schedule-metrics.ts';
import { CopyMetrics } from '../dispatcher/copy-metrics.ts';
import { nodeLister } from '../dispatcher/nodes.ts';
import { startServers } from '../dispatcher/server.ts';
import { StoredChanges } from '../dispatcher/stored.ts';

const args: ArgsDef = Object.fromEntries(
  settings.map((s) => [s.flag, { type: 'string', description: `${s.description} (${s.env}, default ${s.default})` }]),
);

function parts(config: DispatcherConfig, component: string): { deps: Omit<DispatcherDeps, 'kube'>; http: HttpKube } {
  const kc = loadKubeConfig();
  const log = createLogger({ component, instance: hostname() });
  const http = new HttpKube(kc, { timeoutMs: config.apiTimeoutMs });
  const deps = {
    namespace: config.namespace,
    limits: { cluster: config.maxTransfers, perNode: config.maxTransfersPerNode },
    maxAttempts: config.maxAttempts,
    veleroNamespace: config.veleroNamespace,
    nodes: nodeLister(kc),
    log,
    instance: hostname(),
  };
  return { deps, http };
}

const serve = defineCommand({
  meta: { name: 'serve', description: 'Serve the admission webhook (HTTPS) and health and metrics (HTTP)' },
  args,
  async run({ args: flags }) {
    const config = loadConfig(flags);
    const { deps, http } = parts(config, 'dispatcher');
    const metrics = new DispatcherMetrics({
      schedules: new ScheduleMetrics(http, { log: deps.log }),
      copies: new CopyMetrics(http, { log: deps.log }),
    });
    // no retries on the admission path: the answer is due within seconds, and the sweep covers a lost dispatch
    const dispatcher = new Dispatcher({ ...deps, kube: http, metrics });
    const changes = new StoredChanges(http);
    const servers = await startServers(
      config,
      {
        kube: http,
        namespace: config.namespace,
        dispatcher,
        changes,
        metrics,
        log: deps.log,
        budgetMs: config.budgetMs,
      },
      deps.log,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    deps.log.info('stopping');
    await servers.close();
    // changes allowed just before the stop are acted on (each waits at most its timeout); the sweep has the rest
    await changes.idle();
    http.close();
  },
});

const sweep = defineCommand({
  meta: {
    name: 'sweep',
    description: 'One pass over every DataUpload and DataDownload: dispatch, retry, give up, tidy up',
  },
  args,
  async run({ args: flags }) {
    const config = loadConfig(flags);
    const { deps, http } = parts(config, 'sweep');
    const kube = new RetryingKube(http, { maxElapsedMs: 60_000 });
    try {
      const report = await sweepOnce(new Dispatcher({ ...deps, kube }));
      deps.log.info('sweep done', { ...report });
      if (report.errors.length)
        throw new Error(`The sweep finished with ${report.errors.length} errors; the first: ${report.errors[0]}`);
    } finally {
      http.close();
    }
  },
});

const main = defineCommand({
  meta: { name: 'ferry-dispatcher', version: '0.1.0', description: "ferry's admission webhook and sweep" },
  subCommands: { serve, sweep },
});

process.exitCode = await runCli(main);
