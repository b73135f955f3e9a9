// gatehouse in front of an app, assembled from configuration: the front door (front-door.ts) with
// the webhook receiver, the verify endpoint, the auth layer with its token store, and the proxy.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import type { AuthLayer } from '../core/auth-layer.js';
import { behindTrustedProxy } from '../core/http/request-view.js';
import type { Logger } from '../logging.js';
import { UpstreamWebhookApp } from '../webhook/app-forwarder.js';
import { DeliveryHeadersForApp } from '../webhook/app-headers.js';
import type { WebhookReceiver } from '../webhook/receiver.js';
import { createSidecar, type Sidecar } from './app.js';
import type { DownloadRate } from './download-rate.js';
import type { AppForwarder } from './forward-to-app.js';
import { createFrontDoor } from './front-door.js';
import { resolveTrustedProxies, startGatewayRuntime, type GatewayBaseOptions } from './gateway-runtime.js';
import type { Listening } from './listen.js';
import { serveRequests } from './serve-requests.js';
import { resolveUpstreamLimits } from './upstream-limits.js';
import { CLIENT_IDLE_MARGIN_MS, resolveUpstreamTimeout } from './upstream-timeout.js';
import { parseUpstreamUrl } from './upstream-url.js';

export interface GatewayOptions extends GatewayBaseOptions {
  /** The app's origin, `scheme://host[:port]`: nothing more (parseUpstreamUrl says why). */
  readonly upstream: string;
  /** How long the app may stay silent on a request, ms; default GATEHOUSE_UPSTREAM_TIMEOUT_MS, else 60 s. */
  readonly upstreamTimeoutMs?: number;
  /** Connections to the app at most; default GATEHOUSE_UPSTREAM_CONNECTIONS, else 512 (upstream-limits.ts). */
  readonly upstreamConnections?: number;
  /** Requests that may wait for a connection to the app; default GATEHOUSE_UPSTREAM_QUEUE, else 1024. */
  readonly upstreamQueue?: number;
  /** WebSocket connections open at once at most; default GATEHOUSE_UPSTREAM_WEBSOCKETS, else 1024. */
  readonly upstreamWebSockets?: number;
  /** How fast clients must read the app's answers (default 240 B/s after 5 s of waiting). */
  readonly downloadRate?: DownloadRate;
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

/** gatehouse in front of an app (`gatehouse serve --upstream`): the front door with the sidecar's protected path. */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { logger, metrics } = options;
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
  let sidecar: Sidecar | undefined;
  const started = await startGatewayRuntime(options, trustedProxies, ({ runtime, accessLog, countDecision }) => {
    sidecar = createSidecar({
      layer: runtime.layer,
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
    return deliveriesToApp(options, sidecar, upstreamTimeoutMs);
  });
  const { runtime, receiver, accessLog } = started;
  const door = createFrontDoor({
    receiver,
    logger,
    verify: started.forwardAuth,
    protectedPath: sidecar!.protectedPath,
    websocket: sidecar!.websocket,
    ...(accessLog ? { accessLog } : {}),
  });
  return {
    layer: runtime.layer,
    forwarder: sidecar!.forwarder,
    receiver,
    listener: door.listener,
    upgrade: door.upgrade,
    logger,
    clientIdleTimeoutMs: upstreamTimeoutMs + CLIENT_IDLE_MARGIN_MS,
    close: async () => {
      sidecar!.close();
      await runtime.close();
    },
  };
}

/**
 * Verified deliveries go on to the app (unless GATEHOUSE_WEBHOOK_FORWARD=off) on the proxy's own
 * connections, with the header policy of every forwarded request, counted against the proxy's
 * bound of requests in flight.
 */
function deliveriesToApp(options: GatewayOptions, sidecar: Sidecar, timeoutMs: number): UpstreamWebhookApp {
  const { config } = options;
  const deliveryHeaders = new DeliveryHeadersForApp(
    {
      normalizer: options.core,
      options: { prefix: config.headerPrefix, exposeTokens: config.tokenStore.enabled },
      behindTrustedProxy: behindTrustedProxy(config),
    },
    config,
  );
  return new UpstreamWebhookApp({
    dispatcher: sidecar.pool,
    timeoutMs,
    headersFor: (request) => deliveryHeaders.headersFor(request),
    admit: () => sidecar.forwarder.admit(),
    release: () => sidecar.forwarder.release(),
  });
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
