// Everything one gatehouse process serves, assembled from configuration:
// the webhook receiver, the auth layer with its token store, and the proxy.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import type { AuthLayer } from '../core/auth-layer.js';
import type { AuthConfig } from '../core/config/auth-config.js';
import { ForwardAuth } from '../core/forward-auth/verify.js';
import { TRUSTED_PROXIES_VARIABLE, TrustedProxies } from '../core/forward-auth/trusted-proxies.js';
import type { PublishingChannel } from '../core/token-store/change-channel.js';
import type { GatehouseMetrics } from '../metrics/gatehouse-metrics.js';
import { behindTrustedProxy } from '../core/http/origin.js';
import type { Logger } from '../logging.js';
import type { GatehouseCore } from '../native/types.js';
import type { WebhookReceiverOptions } from '../webhook/config.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { UpstreamWebhookApp } from '../webhook/app-forwarder.js';
import { DeliveryHeadersForApp, stripVerifiedHeader } from '../webhook/app-headers.js';
import { decisionCounter, startGatewayRuntime } from './gateway-runtime.js';
import { createSidecar, UPSTREAM_IDLE_MS } from './app.js';
import type { AppForwarder, DownloadRate } from './forward-to-app.js';
import type { Listening } from './listen.js';
import { serveRequests } from './serve-requests.js';
import { createRequestListener } from './server.js';
import { routeUpgrades } from './upgrades.js';
import { resolveUpstreamLimits } from './upstream-limits.js';
import { upstreamPool } from './upstream-pool.js';
import { CLIENT_IDLE_MARGIN_MS, resolveUpstreamTimeout } from './upstream-timeout.js';
import { parseUpstreamUrl } from './upstream-url.js';
import { isVerifyRequest, verifyRoute } from './verify-route.js';

export interface GatewayOptions {
  readonly config: AuthConfig;
  /** The app's origin, `scheme://host[:port]`: nothing more (parseUpstreamUrl says why). */
  readonly upstream: string;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** Master key; default GATEHOUSE_ENCRYPTION_KEY / WEBSITE_AUTH_ENCRYPTION_KEY, else a key file in the store directory. */
  readonly masterKey?: Buffer;
  readonly webhook?: WebhookReceiverOptions;
  /** How long the app may stay silent on a request, ms; default GATEHOUSE_UPSTREAM_TIMEOUT_MS, else 60 s. */
  readonly upstreamTimeoutMs?: number;
  /** How long a /.auth POST body may take to arrive in full (default 30 s). */
  readonly authBodyDeadlineMs?: number;
  readonly version?: string;
  readonly sessionCacheTtlMs?: number;
  /** One log line per request answered or forwarded (access-log.ts); default GATEHOUSE_ACCESS_LOG, else off. */
  readonly accessLog?: boolean;
  /** Connections to the app at most; default GATEHOUSE_UPSTREAM_CONNECTIONS, else 512 (upstream-limits.ts). */
  readonly upstreamConnections?: number;
  /** Requests that may wait for a connection to the app; default GATEHOUSE_UPSTREAM_QUEUE, else 1024. */
  readonly upstreamQueue?: number;
  /** WebSocket connections open at once at most; default GATEHOUSE_UPSTREAM_WEBSOCKETS, else 1024. */
  readonly upstreamWebSockets?: number;
  /** Where the workers sharing the token store directory tell each other of its changes (serve --workers). */
  readonly storeChannel?: PublishingChannel;
  /** Where requests, sign-ins, refreshes, logouts, store calls and deliveries are counted (--metrics-port). */
  readonly metrics?: GatehouseMetrics;
  /** How fast clients must read the app's answers (default 240 B/s after 5 s of waiting). */
  readonly downloadRate?: DownloadRate;
  /** Who may ask the verify endpoint (trusted-proxies.ts); default GATEHOUSE_TRUSTED_PROXIES, else loopback. */
  readonly trustedProxies?: string;
}

/** The peers the verify endpoint answers: the option, else GATEHOUSE_TRUSTED_PROXIES, else loopback. */
export function resolveTrustedProxies(option: string | undefined, env: NodeJS.ProcessEnv): TrustedProxies {
  const value = option ?? env[TRUSTED_PROXIES_VARIABLE];
  return TrustedProxies.parse(value === undefined || value.trim() === '' ? undefined : value);
}

export interface Gateway {
  readonly layer: AuthLayer;
  /** What sends forwarded requests to the app (its requests in flight, for tests and metrics). */
  readonly forwarder: AppForwarder;
  readonly receiver: WebhookReceiver;
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** WebSocket handshakes, authorized then proxied; any other upgrade is served as an ordinary request (upgrades.ts). */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Where the gateway logs; also the refusals made outside the listener (CONNECT, unparseable requests). */
  readonly logger: Logger;
  /** A client connection with no bytes either way for this long is closed (see attach). */
  readonly clientIdleTimeoutMs: number;
  /** Stops the sweep and the upstream pool, and closes the link to Redis. */
  close(): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger } = options;
  // Before anything starts: nothing is left running when the app's address is unusable.
  const upstream = parseUpstreamUrl(options.upstream);
  if ('problem' in upstream) throw new TypeError(`upstream ${upstream.problem}`);
  const env = options.env ?? process.env;
  const upstreamTimeoutMs = resolveUpstreamTimeout(options.upstreamTimeoutMs, env);
  const trustedProxies = resolveTrustedProxies(options.trustedProxies, env);
  const limits = resolveUpstreamLimits(
    { connections: options.upstreamConnections, queue: options.upstreamQueue, webSockets: options.upstreamWebSockets },
    env,
  );
  const { runtime, accessLog } = await startGatewayRuntime(options);
  // Every request judged is counted: proxied ones and those a web server asks /.auth/verify about.
  const countDecision = decisionCounter(options.metrics, config.apiPrefix);
  const { layer } = runtime;
  const metrics = options.metrics;
  const sidecar = createSidecar({
    layer,
    upstream: upstream.origin,
    logger,
    upstreamTimeoutMs,
    upstreamConnections: limits.connections,
    upstreamQueue: limits.queue,
    upstreamWebSockets: limits.webSockets,
    ...(accessLog ? { accessLog } : {}),
    ...(options.authBodyDeadlineMs !== undefined ? { authBodyDeadlineMs: options.authBodyDeadlineMs } : {}),
    ...(options.downloadRate ? { downloadRate: options.downloadRate } : {}),
    ...(metrics ? { onUpstreamFailure: (kind: 'timeout' | 'error' | 'full') => metrics.upstreamFailure(kind) } : {}),
    ...(countDecision ? { onDecision: countDecision } : {}),
  });
  // Verified deliveries go on to the app (unless GATEHOUSE_WEBHOOK_FORWARD=off), with the header
  // policy of every forwarded request, counted against the proxy's bound of requests in flight.
  const webhookPool = upstreamPool(new URL(upstream.origin), {
    connections: limits.connections,
    timeoutMs: upstreamTimeoutMs,
    idleMs: UPSTREAM_IDLE_MS,
  });
  const deliveryHeaders = new DeliveryHeadersForApp(
    {
      normalizer: options.core,
      options: { prefix: config.headerPrefix, exposeTokens: config.tokenStore.enabled },
      behindTrustedProxy: behindTrustedProxy(config),
    },
    config,
  );
  const app = new UpstreamWebhookApp({
    dispatcher: webhookPool,
    timeoutMs: upstreamTimeoutMs,
    headersFor: (request) => deliveryHeaders.headersFor(request),
    admit: () => sidecar.forwarder.admit(),
    release: () => sidecar.forwarder.release(),
  });
  const receiver = new WebhookReceiver({
    logger,
    app,
    core: options.core,
    ...(options.env ? { env: options.env } : {}),
    ...(runtime.redis ? { redis: runtime.redis } : {}),
    ...(metrics ? { onDelivery: (event: string, status: number) => metrics.delivery(event, status) } : {}),
    ...options.webhook,
  });
  // Webhook deliveries are anonymous and signed: they go to the receiver, never through sign-in.
  // The verify endpoint (forward authentication) is served beside the proxy: a web server may ask it too.
  const forwardAuth = new ForwardAuth({
    layer,
    trustedProxies,
    headers: options.core,
    ...(countDecision ? { onDecision: countDecision } : {}),
  });
  const routed = createRequestListener(receiver, sidecar.app, verifyRoute(forwardAuth, logger));
  // Only gatehouse says a delivery was verified: no request reaches the app with its own claim.
  // (A verify request keeps it: it is the original's, and makes verify refuse that request.)
  const served = (req: IncomingMessage, res: ServerResponse): void => {
    if (!isVerifyRequest(forwardAuth, req)) stripVerifiedHeader(req);
    routed(req, res);
  };
  const listener = accessLog?.wrap(served) ?? served;
  return {
    layer,
    forwarder: sidecar.forwarder,
    receiver,
    listener,
    upgrade: routeUpgrades({
      websocket: (req, socket, head) => {
        stripVerifiedHeader(req);
        sidecar.handleUpgrade(req, socket, head);
      },
      ordinary: listener,
      plain: (req) => isVerifyRequest(forwardAuth, req),
      logger,
    }),
    logger,
    clientIdleTimeoutMs: upstreamTimeoutMs + CLIENT_IDLE_MARGIN_MS,
    close: async () => {
      sidecar.close();
      void webhookPool.destroy();
      await runtime.close();
    },
  };
}

/**
 * Serves the gateway on a listening server. Node's default cap on the time to receive a whole
 * request (requestTimeout, 5 minutes) would cut off any long upload on its way to the app, so it
 * is lifted; what bounds a client instead is inactivity: headers must arrive within node's
 * headersTimeout (60 s), and a connection silent both ways for clientIdleTimeoutMs is closed.
 * Upgraded (WebSocket) connections leave node's HTTP handling and are not timed.
 */
export function attach(
  listening: Listening,
  gateway: Pick<Gateway, 'listener' | 'upgrade' | 'logger' | 'clientIdleTimeoutMs'>,
): void {
  const { server } = listening;
  server.requestTimeout = 0;
  server.timeout = gateway.clientIdleTimeoutMs;
  serveRequests(server, gateway.listener, gateway.logger);
  server.on('upgrade', gateway.upgrade);
}
