// The Kube a process uses: the apiserver from its configuration, behind retries of transient failures that are
// logged as they happen.
import { HttpKube } from './client.ts';
import { loadKubeConfig } from './config.ts';
import type { Kube } from './kube.ts';
import type { Logger } from './logger.ts';
import { RetryingKube, type KubeRetryOptions } from './retry.ts';

export function connect(log: Logger, opts: KubeRetryOptions = {}): { kube: Kube; close(): void } {
  const http = new HttpKube(loadKubeConfig());
  const kube = new RetryingKube(http, {
    onRetry: ({ operation, attempt, delayMs, error }) =>
      log.warn(`could not ${operation}; retrying`, {
        attempt,
        delayMs,
        error: error instanceof Error ? error.message : String(error),
      }),
    ...opts,
  });
  return { kube, close: () => http.close() };
}
