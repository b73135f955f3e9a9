import { AggregatorRegistry } from 'prom-client';

import { loadAuthConfig } from '../core/config/load.js';
import { createLogger } from '../logging.js';
import type { MetricsListener } from '../metrics/metrics-listener.js';
import { startWorkers } from '../workers/primary.js';
import { upstreamUrl } from './flag-values.js';
import { SHUTDOWN_GRACE_MS, stopOn } from './graceful-stop.js';
import { serveMetrics, type MetricsAddress } from './serve-metrics.js';

/**
 * `serve --workers N`: the primary checks what it can before forking (a bad --upstream or
 * configuration is said once, not by every worker), then runs the workers and prints what the
 * first of them would have printed. It serves the metrics, summed over the workers.
 */
export async function servePrimary(
  count: number,
  upstream: string | undefined,
  configFile: string | undefined,
  metricsAt: MetricsAddress | undefined,
  forwardAuth: boolean,
): Promise<void> {
  if (upstream !== undefined) upstreamUrl(upstream);
  if (upstream !== undefined || forwardAuth) loadAuthConfig(configFile);
  const logger = createLogger();
  // Before any worker: it listens for the workers' answers.
  const aggregator = metricsAt !== undefined ? new AggregatorRegistry() : undefined;
  const running = await startWorkers(count, logger);
  let metricsListener: MetricsListener | undefined;
  stopOn(logger, async () => {
    logger.info({ graceMs: SHUTDOWN_GRACE_MS }, 'stopping: every worker stops gracefully');
    await running.stop(SHUTDOWN_GRACE_MS);
    await metricsListener?.close();
    logger.info('stopped');
  });
  const lines = [...running.listening.announcement];
  if (metricsAt !== undefined && aggregator !== undefined) {
    const served = await serveMetrics(
      metricsAt,
      { contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() },
      logger,
    );
    metricsListener = served.listener;
    lines.push(served.line);
  }
  for (const line of lines) console.log(line);
}
