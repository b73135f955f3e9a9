// `gatehouse serve`: the sidecar (--upstream), forward authentication (--forward-auth) or the
// webhook receiver alone, in one process or as a worker of `--workers`; the flags checked, the
// server started, its lines printed, its graceful stop installed.
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';

import type { AuthConfig } from '../core/config/auth-config.js';
import { loadAuthConfig } from '../core/config/load.js';
import { createLogger, type Logger } from '../logging.js';
import type { GatehouseMetrics } from '../metrics/gatehouse-metrics.js';
import type { GatehouseCore } from '../native/types.js';
import { createForwardAuthGateway } from '../sidecar/forward-auth-gateway.js';
import { attach, createGateway, type Gateway } from '../sidecar/gateway.js';
import { listenEarly, type Listening } from '../sidecar/listen.js';
import { startServer } from '../sidecar/server.js';
import { VERSION } from '../version.js';
import { reportListening, stopWhenPrimaryAsks } from '../workers/primary.js';
import { WorkerChannel } from '../workers/worker-channel.js';
import { parseWorkerCount } from '../workers/worker-count.js';
import { activeCore } from './active-core.js';
import { listenPort, upstreamUrl } from './flag-values.js';
import { drain, stoppable, type Stoppable } from './graceful-stop.js';
import { receiverLine } from './receiver-line.js';
import { metricsAddress, processMetrics, serveMetrics } from './serve-metrics.js';
import { servePrimary } from './serve-workers.js';
import { COMMAND_OPTIONS, UsageError } from './usage.js';

export async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: COMMAND_OPTIONS.serve });
  const host = values.host ?? '127.0.0.1';
  const port = listenPort(values.port);
  const workers = parseWorkerCount(values.workers);
  if (typeof workers !== 'number') throw new UsageError(workers.problem);
  const metricsAt = metricsAddress(values['metrics-port'], values['metrics-host']);
  const forwardAuth = values['forward-auth'] === true;
  if (forwardAuth && values.upstream !== undefined)
    throw new UsageError(
      '--forward-auth serves no app: leave out --upstream (with --upstream, /.auth/verify is served beside the proxy)',
    );
  if (values.upstream === undefined && !forwardAuth && values.config !== undefined)
    throw new UsageError('--config needs --upstream (the app to protect) or --forward-auth');
  if (workers > 1 && cluster.isPrimary)
    return servePrimary(workers, values.upstream, values.config, metricsAt, forwardAuth);
  // A worker of `--workers`: its log lines say which, and the primary prints the listening lines.
  const logger = cluster.isWorker ? createLogger().child({ worker: cluster.worker!.id }) : createLogger();
  const metrics = processMetrics(metricsAt);
  const served = forwardAuth
    ? await serveForwardAuth(host, port, values.config, logger, metrics)
    : values.upstream === undefined
      ? await serveReceiver(host, port, logger, metrics)
      : await serveGateway(host, port, upstreamUrl(values.upstream), values.config, logger, metrics);
  if (cluster.isWorker) {
    reportListening(served.url, served.lines);
    stopWhenPrimaryAsks(served.stop);
    return;
  }
  const lines = [...served.lines];
  if (metricsAt !== undefined && metrics !== undefined) {
    const { listener, line } = await serveMetrics(
      metricsAt,
      { contentType: metrics.registry.contentType, metrics: () => metrics.registry.metrics() },
      logger,
    );
    served.onStop(() => listener.close());
    lines.push(line);
  }
  for (const line of lines) console.log(line);
}

/** What a started server prints, and how to stop it. */
interface Served extends Stoppable {
  readonly url: string;
  readonly lines: readonly string[];
}

async function serveReceiver(
  host: string,
  port: number,
  logger: Logger,
  metrics: GatehouseMetrics | undefined,
): Promise<Served> {
  const running = await startServer({
    host,
    port,
    logger,
    ...(metrics ? { webhook: { onDelivery: (event, status) => metrics.delivery(event, status) } } : {}),
  });
  return {
    url: running.url,
    lines: [`gatehouse listening on ${running.url}`, receiverLine(running.url, running.receiver.config)],
    ...stoppable(logger, () => drain(running, logger)),
  };
}

/** What serve --upstream and serve --forward-auth both do before and after making their gateway. */
interface AuthenticatedStart {
  readonly config: AuthConfig;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  readonly version: string;
  readonly storeChannel?: WorkerChannel;
  readonly metrics?: GatehouseMetrics;
}

/**
 * The configuration (its warnings logged), the core, the listener (listening first: the port is
 * taken before anything else starts), the gateway `make` builds from them, and its graceful stop:
 * the requests in progress drain, then the gateway closes (they were still using it).
 */
async function serveAuthenticated<
  G extends Pick<Gateway, 'listener' | 'upgrade' | 'logger' | 'clientIdleTimeoutMs' | 'close'>,
>(
  host: string,
  port: number,
  configFile: string | undefined,
  logger: Logger,
  metrics: GatehouseMetrics | undefined,
  make: (start: AuthenticatedStart) => Promise<G>,
): Promise<{ front: Listening; gateway: G; config: AuthConfig; stopping: Stoppable }> {
  const loaded = loadAuthConfig(configFile);
  for (const warning of loaded.warnings) logger.warn({ source: loaded.source }, `configuration: ${warning}`);
  const { core } = activeCore(logger);
  const front = await listenEarly(host, port);
  const gateway = await make({
    config: loaded.config,
    core,
    logger,
    version: VERSION,
    ...(cluster.isWorker ? { storeChannel: new WorkerChannel() } : {}),
    ...(metrics ? { metrics } : {}),
  });
  attach(front, gateway);
  const stopping = stoppable(logger, async () => {
    await drain(front, logger);
    await gateway.close();
  });
  return { front, gateway, config: loaded.config, stopping };
}

async function serveGateway(
  host: string,
  port: number,
  upstream: string,
  configFile: string | undefined,
  logger: Logger,
  metrics: GatehouseMetrics | undefined,
): Promise<Served> {
  const { front, gateway, stopping } = await serveAuthenticated(host, port, configFile, logger, metrics, (start) =>
    createGateway({ ...start, upstream }),
  );
  const receiver = gateway.receiver;
  return {
    url: front.url,
    lines: [
      `gatehouse listening on ${front.url} → ${upstream}`,
      receiverLine(front.url, receiver.config, receiver.forwarding ? upstream : undefined),
    ],
    ...stopping,
  };
}

async function serveForwardAuth(
  host: string,
  port: number,
  configFile: string | undefined,
  logger: Logger,
  metrics: GatehouseMetrics | undefined,
): Promise<Served> {
  const { front, gateway, config, stopping } = await serveAuthenticated(
    host,
    port,
    configFile,
    logger,
    metrics,
    (start) => createForwardAuthGateway(start),
  );
  const verify = `${front.url}${config.apiPrefix}/verify`;
  return {
    url: front.url,
    lines: [
      `gatehouse listening on ${front.url} (forward authentication: GET ${verify} for ${gateway.trustedProxies})`,
      receiverLine(front.url, gateway.receiver.config),
    ],
    ...stopping,
  };
}
