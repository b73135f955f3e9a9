#!/usr/bin/env node
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';

import { AggregatorRegistry } from 'prom-client';

import { didYouMean } from './core/closest-name.js';
import { AuthConfigError, type AuthConfig } from './core/config/auth-config.js';
import { loadAuthConfig } from './core/config/load.js';
import { loadDev } from './dev/load.js';
import { LOG_FORMAT_VARIABLE } from './log-format.js';
import { createLogger, flushLogs, type Logger } from './logging.js';
import { logActiveCore, selectCore, type CoreSelection } from './native/index.js';
import type { GatehouseCore } from './native/types.js';
import { attach, createGateway, type Gateway } from './sidecar/gateway.js';
import { createForwardAuthGateway } from './sidecar/forward-auth-gateway.js';
import { listenEarly, type Listening } from './sidecar/listen.js';
import { startServer } from './sidecar/server.js';
import { parseUpstreamUrl } from './sidecar/upstream-url.js';
import { VERSION } from './version.js';
import { DEFAULT_WEBHOOK_PATH, type WebhookConfig } from './webhook/config.js';
import { signatureHeader } from './webhook/sign.js';
import { GatehouseMetrics } from './metrics/gatehouse-metrics.js';
import { startMetricsListener, type MetricsListener, type MetricsSource } from './metrics/metrics-listener.js';
import { wholeNumber } from './whole-number.js';
import { reportListening, startWorkers, stopWhenPrimaryAsks } from './workers/primary.js';
import { WorkerChannel } from './workers/worker-channel.js';
import { parseWorkerCount } from './workers/worker-count.js';

/** Each command's usage: its options, the environment it reads, an example. */
const COMMAND_USAGE = {
  dev: `Usage:
  gatehouse dev [--host 127.0.0.1] [--port 8080] [--upstream <url>] [--public-host <name>]
      Zero-configuration demo: a development OpenID provider, a demo app, and
      gatehouse in front of it. Sign in as demo / demo.

Options:
  --upstream <url>      your own app instead of the demo, every path of it protected
  --host <address>      where to listen (default 127.0.0.1; 0.0.0.0 for other machines
                        or a container's host: the provider then listens there too, on
                        the next port)
  --port <n>            where to listen (default $PORT, else 8080; npm start --port <n>)
  --public-host <name>  the name browsers use for this machine, with a --host beyond
                        loopback (default: the --host address, or for 0.0.0.0 this
                        machine's first non-loopback IPv4 address)

Environment:
  GATEHOUSE_LOG_FORMAT  json or pretty (default here: pretty)
  GATEHOUSE_LOG_LEVEL   fatal, error, warn, info (default), debug, trace, silent

Example:
  gatehouse dev --upstream http://localhost:3000`,
  serve: `Usage:
  gatehouse serve --upstream <url> [--config <file>] [--host 127.0.0.1] [--port 8080]
                  [--workers N|auto] [--metrics-port N] [--metrics-host 127.0.0.1]
      The sidecar: authenticate every request, forward to <url> with identity
      headers. The webhook receiver is at ${DEFAULT_WEBHOOK_PATH}.
  gatehouse serve --forward-auth [--config <file>] [--host 127.0.0.1] [--port 8080] ...
      No app behind gatehouse: a web server in front (nginx, Caddy, Traefik) proxies
      to the app and asks GET /.auth/verify; gatehouse serves /.auth/* on the app's origin.
  gatehouse serve [--host 127.0.0.1] [--port 8080] [--workers N|auto] [--metrics-port N]
      Without --upstream: only the signed webhook receiver.

Options:
  --upstream <url>        the app to protect (http:// or https://, an origin)
  --config <file>         the authsettingsV2 document (JSON)
  --forward-auth          serve /.auth/* and /.auth/verify for a web server in front
  --host <address>        where to listen (default 127.0.0.1)
  --port <n>              where to listen (default $PORT, else 8080)
  --workers <N|auto>      processes sharing the port (auto: one per usable CPU)
  --metrics-port <n>      Prometheus metrics at GET /metrics on a listener of their own
  --metrics-host <addr>   where that listener listens (default 127.0.0.1)

Environment:
  GATEHOUSE_AUTH_CONFIG_JSON, WEBSITE_AUTH_V2_CONFIG_JSON
                          the document itself, when --config is not given
  GATEHOUSE_ENCRYPTION_KEY
                          the token store's key, 32 bytes as 64 hex digits or base64 (else a
                          key file in the store directory, .gatehouse/tokens by default)
  GATEHOUSE_REDIS_URL     sessions in Redis, shared by every instance (redis://, rediss://)
  GATEHOUSE_TRUSTED_PROXIES
                          who may ask /.auth/verify (default loopback)
  FORGE_WEBHOOK_SECRET    the webhook receiver's secret
  GATEHOUSE_LOG_FORMAT    json or pretty (default: pretty on a terminal, else json)
  GATEHOUSE_LOG_LEVEL     fatal, error, warn, info (default), debug, trace, silent
  PORT                    the port, when --port is not given

Example:
  gatehouse serve --upstream http://127.0.0.1:3000 --config auth.json --port 8080`,
  sign: `Usage:
  gatehouse sign [--secret <secret>] [--file <path>]
      Print the X-Forge-Signature-256 value for a body read from --file or stdin.

Options:
  --secret <secret>   the webhook secret (default $FORGE_WEBHOOK_SECRET)
  --file <path>       the body (default: stdin, byte for byte)

Example:
  echo -n '{"ref":"refs/heads/main"}' | gatehouse sign --secret s3cret`,
} as const;

type Command = keyof typeof COMMAND_USAGE;

/** Each command's flags: what parseArgs takes, and the names "did you mean" picks from. */
const COMMAND_OPTIONS = {
  dev: {
    host: { type: 'string' },
    port: { type: 'string' },
    upstream: { type: 'string' },
    'public-host': { type: 'string' },
  },
  serve: {
    host: { type: 'string' },
    port: { type: 'string' },
    upstream: { type: 'string' },
    config: { type: 'string' },
    workers: { type: 'string' },
    'metrics-port': { type: 'string' },
    'metrics-host': { type: 'string' },
    'forward-auth': { type: 'boolean' },
  },
  sign: { secret: { type: 'string' }, file: { type: 'string' } },
} as const satisfies Record<Command, NonNullable<ParseArgsConfig['options']>>;

function isCommand(name: string | undefined): name is Command {
  return name !== undefined && Object.hasOwn(COMMAND_USAGE, name);
}

const USAGE = `Usage:
  gatehouse dev [--host 127.0.0.1] [--port 8080] [--upstream <url>]
      Zero-configuration demo: a development OpenID provider, a demo app, and
      gatehouse in front of it. Sign in as demo / demo. With --upstream, your
      own app instead of the demo, every path of it protected.
  gatehouse serve --upstream <url> [--config <file>] [--host 127.0.0.1] [--port 8080]
                  [--workers N|auto] [--metrics-port N] [--metrics-host 127.0.0.1]
      The sidecar: authenticate every request, forward to <url> with identity
      headers. The webhook receiver is at ${DEFAULT_WEBHOOK_PATH}.
  gatehouse serve --forward-auth [--config <file>] [--host 127.0.0.1] [--port 8080] ...
      No app behind gatehouse: a web server in front (nginx, Caddy, Traefik) asks
      GET /.auth/verify; gatehouse serves /.auth/* on the app's origin.
  gatehouse serve [--host 127.0.0.1] [--port 8080] [--workers N|auto] [--metrics-port N]
      Without --upstream: only the signed webhook receiver.
  gatehouse sign [--secret <secret>] [--file <path>]
      Print the X-Forge-Signature-256 value for a body read from --file or stdin.
  gatehouse version | help

gatehouse <command> --help prints a command's options, environment and an example.`;

class UsageError extends Error {}

/** The port to listen on: --port, else PORT (an empty PORT counts as unset), else 8080. */
function listenPort(flag: string | undefined): number {
  const [source, value] = flag !== undefined ? ['--port', flag] : ['PORT', process.env.PORT];
  if (value === undefined || (source === 'PORT' && value === '')) return 8080;
  return portNumber(source, value);
}

/** A port as given: decimal digits only (wholeNumber), five at most, 0-65535. */
function portNumber(source: string, value: string): number {
  const port = wholeNumber(value);
  if (value.length > 5 || Number.isNaN(port) || port > 65535)
    throw new UsageError(`${source} must be a port number, 0-65535 (got ${JSON.stringify(value)})`);
  return port;
}

/** Where the metrics listener listens (--metrics-port, --metrics-host), if it does. */
interface MetricsAddress {
  readonly host: string;
  readonly port: number;
}

function metricsAddress(port: string | undefined, host: string | undefined): MetricsAddress | undefined {
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
function processMetrics(address: MetricsAddress | undefined): GatehouseMetrics | undefined {
  if (address === undefined) return undefined;
  const metrics = new GatehouseMetrics();
  if (cluster.isWorker) {
    new AggregatorRegistry(); // answers the primary's requests for this worker's metrics
    AggregatorRegistry.setRegistries([metrics.registry]);
  }
  return metrics;
}

/** Starts the metrics listener (in the process that serves them: a single process, or the primary); its line to print. */
async function serveMetrics(
  address: MetricsAddress,
  source: MetricsSource,
  logger: Logger,
): Promise<{ listener: MetricsListener; line: string }> {
  const listener = await startMetricsListener(address.host, address.port, source, logger);
  return { listener, line: `metrics: GET ${listener.url}` };
}

function upstreamUrl(value: string): string {
  const parsed = parseUpstreamUrl(value);
  if ('problem' in parsed) throw new UsageError(`--upstream ${parsed.problem}`);
  return parsed.origin;
}

function coreSelection(logger: ReturnType<typeof createLogger>): CoreSelection {
  const selection = selectCore();
  logActiveCore(logger, selection);
  return selection;
}

/** How long a stop (SIGTERM from an orchestrator, Ctrl-C) waits for requests in progress. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Runs `stop` on the first SIGINT or SIGTERM, then exits once the logs are out; a second signal
 * exits at once. Installed before the listening line is printed: whoever waits for that line
 * (a supervisor, a test) may signal at once, and must get a graceful stop, not node's default kill.
 * Returns what starts the same stop without a signal (a worker asked by the primary); asked again,
 * it changes nothing.
 */
function stopOn(logger: Logger, stop: () => Promise<void>): () => void {
  let stopping = false;
  const begin = (): void => {
    if (stopping) return;
    stopping = true;
    const exit = (code: number) => () => flushLogs(logger).then(() => process.exit(code));
    stop().then(exit(0), exit(1));
  };
  const onSignal = (): void => {
    if (stopping) process.exit(1);
    begin();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return begin;
}

/** A graceful stop of a listening server: requests in progress may finish, for SHUTDOWN_GRACE_MS at most. */
async function drain(listening: Pick<Listening, 'drain'>, logger: Logger): Promise<void> {
  logger.info({ graceMs: SHUTDOWN_GRACE_MS }, 'stopping: no new connections; requests in progress may finish');
  const finished = await listening.drain(SHUTDOWN_GRACE_MS);
  if (finished) logger.info('stopped');
  else
    logger.warn({ graceMs: SHUTDOWN_GRACE_MS }, 'stopped: connections still open after the grace period were closed');
}

async function serve(args: string[]): Promise<void> {
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

/** What a started server prints, how to stop it gracefully, and what else to close when it stops. */
interface Served {
  readonly url: string;
  readonly lines: readonly string[];
  readonly stop: () => void;
  onStop(then: () => Promise<void>): void;
}

/** stopOn, with more to close after `stop` (a metrics listener started later). */
function stoppable(logger: Logger, stop: () => Promise<void>): Pick<Served, 'stop' | 'onStop'> {
  const after: Array<() => Promise<void>> = [];
  const begin = stopOn(logger, async () => {
    await stop();
    for (const close of after) await close();
  });
  return { stop: begin, onStop: (then) => void after.push(then) };
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
): Promise<{ front: Listening; gateway: G; config: AuthConfig; stopping: Pick<Served, 'stop' | 'onStop'> }> {
  const loaded = loadAuthConfig(configFile);
  for (const warning of loaded.warnings) logger.warn({ source: loaded.source }, `configuration: ${warning}`);
  const { core } = coreSelection(logger);
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

/**
 * `serve --workers N`: the primary checks what it can before forking (a bad --upstream or
 * configuration is said once, not by every worker), then runs the workers and prints what the
 * first of them would have printed. It serves the metrics, summed over the workers.
 */
async function servePrimary(
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

/** Where deliveries go, and, when no secret is set, that every one of them will get a 500 (docs/webhooks.md#error-responses) until it is. */
function receiverLine(
  url: string,
  config: Pick<WebhookConfig, 'path' | 'secrets' | 'secretVariable' | 'forwardPath'>,
  forwardingTo?: string,
): string {
  const unconfigured =
    config.secrets.length === 0 ? ` (not configured: answers 500 until ${config.secretVariable} is set)` : '';
  const forwarded =
    forwardingTo !== undefined ? `; verified deliveries go on to ${forwardingTo}${config.forwardPath}` : '';
  return `webhook receiver: POST ${url}${config.path}${unconfigured}${forwarded}`;
}

/**
 * `npm start --port 9000`: npm takes --port as its own setting and hands it on as npm_config_port,
 * so the flag reaches dev that way (only when npm runs the start script: any other npm_config_port
 * is npm's business).
 */
function npmStartPort(): string | undefined {
  return process.env.npm_lifecycle_event === 'start' ? process.env.npm_config_port || undefined : undefined;
}

async function dev(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: COMMAND_OPTIONS.dev });
  const upstream = values.upstream !== undefined ? upstreamUrl(values.upstream) : undefined;
  // A person runs dev: readable lines, unless GATEHOUSE_LOG_FORMAT asks otherwise.
  const logger = createLogger(undefined, undefined, process.env[LOG_FORMAT_VARIABLE]?.trim() ? undefined : 'pretty');
  const { core } = coreSelection(logger);
  // Loaded only here: the development provider (oidc-provider) is no part of serve.
  const { startDev } = await loadDev();
  const publicHost = values['public-host'];
  if (publicHost !== undefined && !/^[A-Za-z0-9.:_-]+$/.test(publicHost))
    throw new UsageError(`--public-host must be a host name or address (got ${JSON.stringify(publicHost)})`);
  const running = await startDev({
    host: values.host ?? '127.0.0.1',
    port: listenPort(values.port ?? npmStartPort()),
    core,
    logger,
    version: VERSION,
    ...(upstream !== undefined ? { upstream } : {}),
    ...(publicHost !== undefined ? { publicHost } : {}),
  });
  stopOn(logger, running.close);
  const target = upstream !== undefined ? ` (your app at ${upstream}, every path protected)` : '';
  console.log(`gatehouse dev: open ${running.url}/ and sign in as demo / demo${target}`);
  if (running.listeningBeyondLoopback !== undefined) {
    console.log(
      `listening on ${running.listeningBeyondLoopback}, the development provider on port ${running.providerPortBeyondLoopback}: ` +
        `browsers elsewhere open ${running.url}/ (--public-host names this machine otherwise; publish both ports from a container)`,
    );
    console.log(
      'anyone who can reach these ports can sign in as the development users (demo / demo has the admin role): a development tool, not a deployment',
    );
  }
  console.log(`development OpenID provider: ${running.issuer}`);
  console.log(
    receiverLine(
      running.url,
      running.receiver.config,
      upstream !== undefined && running.receiver.forwarding ? upstream : undefined,
    ),
  );
}

function sign(args: string[]): void {
  const { values } = parseArgs({ args, options: COMMAND_OPTIONS.sign });
  const secret = values.secret ?? process.env.FORGE_WEBHOOK_SECRET ?? '';
  if (secret === '') throw new UsageError('no secret: pass --secret or set FORGE_WEBHOOK_SECRET');
  const body = readFileSync(values.file ?? 0); // fd 0: stdin, byte for byte
  process.stdout.write(`${signatureHeader(secret, body)}\n`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // `gatehouse serve --help` asks for that command's usage, as it would of any command-line tool.
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(isCommand(command) ? COMMAND_USAGE[command] : USAGE);
    return;
  }
  switch (command) {
    case 'dev':
      return dev(rest);
    case 'serve':
      return serve(rest);
    case 'sign':
      return sign(rest);
    case 'version':
    case '--version':
      console.log(VERSION);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      throw new UsageError(
        `unknown command: ${command}${didYouMean(command, [...Object.keys(COMMAND_USAGE), 'version', 'help'], (name) => name)}`,
      );
  }
}

// The reader of stdout may go away (a log shipper that died, `| head`). What is printed there is
// then lost, which must not crash the server: node reports a failed write to a closed pipe as an
// 'error' event, fatal when nothing listens. (Log lines go through pino, which stops on EPIPE.)
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

/** A usage error's one line: parseArgs' own messages made short, an unknown flag with the one it most likely meant. */
function usageLine(error: Error & { code?: string }, command: string | undefined): string {
  const flags = isCommand(command) ? Object.keys(COMMAND_OPTIONS[command]) : [];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const typed = /'(-{1,2}[^']*)'/.exec(error.message)?.[1] ?? '';
    return `unknown option ${typed}${didYouMean(typed.replace(/^-+/, ''), flags, (name) => `--${name}`)}`;
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return error.message.replace(/^Option '([^']*)'.*argument missing$/, '$1 needs a value');
  if (error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return error.message.replace(/^Unexpected argument '([^']*)'.*$/, 'unexpected argument $1');
  return error.message;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    // One line and where to look: the whole usage buries the line that says what was wrong.
    const command = process.argv[2];
    const help = isCommand(command) ? `gatehouse ${command} --help` : 'gatehouse help';
    console.error(`gatehouse: ${usageLine(error as Error, command)}\n(${help} lists the options)`);
    process.exit(2);
  }
  if (error instanceof AuthConfigError) {
    console.error(`gatehouse: ${error.message}`);
    process.exit(1);
  }
  const listenError = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (listenError.syscall === 'listen' && listenError.code === 'EADDRINUSE') {
    console.error(
      `gatehouse: ${listenError.address}:${listenError.port} is already in use: pass --port <n> (or set PORT) to listen elsewhere`,
    );
    process.exit(1);
  }
  console.error(`gatehouse: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
