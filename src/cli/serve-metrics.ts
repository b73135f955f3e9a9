// The metrics listener of `serve --metrics-port`: where it listens, the metrics this process
// keeps for it, and starting it in the process that serves them.
import cluster from 'node:cluster';

import { AggregatorRegistry } from 'prom-client';

import type { Logger } from '../logging.js';
import { GatehouseMetrics } from '../metrics/gatehouse-metrics.js';
import { startMetricsListener, type MetricsListener, type MetricsSource } from '../metrics/metrics-listener.js';
import { portNumber } from './flag-values.js';
import { UsageError } from './usage.js';

/** Where the metrics listener listens (--metrics-port, --metrics-host), if it does. */
export interface MetricsAddress {
  readonly host: string;
  readonly port: number;
}

export function metricsAddress(port: string | undefined, host: string | undefined): MetricsAddress | undefined {
  if (port === undefined) {
    if (host !== undefined) throw new UsageError('--metrics-host needs --metrics-port');
    return undefined;
  }
  return { host: host ?? '127.0.0.1', port: portNumber('--metrics-port', port) };
}

/**
 * The metrics of this process, when the metrics listener runs. In a worker, they are handed to the
 * primary, which serves the sum over every worker (prom-client's cluster aggregation).
 */
export function processMetrics(address: MetricsAddress | undefined): GatehouseMetrics | undefined {
  if (address === undefined) return undefined;
  const metrics = new GatehouseMetrics();
  if (cluster.isWorker) {
    new AggregatorRegistry(); // answers the primary's requests for this worker's metrics
    AggregatorRegistry.setRegistries([metrics.registry]);
  }
  return metrics;
}

/** Starts the metrics listener (in the process that serves them: a single process, or the primary); its line to print. */
export async function serveMetrics(
  address: MetricsAddress,
  source: MetricsSource,
  logger: Logger,
): Promise<{ listener: MetricsListener; line: string }> {
  const listener = await startMetricsListener(address.host, address.port, source, logger);
  return { listener, line: `metrics: GET ${listener.url}` };
}
