// gatehouse with no app behind it (`gatehouse serve --forward-auth`): a web server in front
// proxies to the app itself and only asks gatehouse. Served: the verify endpoint, gatehouse's
// own routes under the prefix (sign-in, callback, me, refresh, logout), which the web server
// sends here on the app's origin, and the webhook receiver (its built-in handlers: there is no
// app to pass deliveries on to). Any other request is decided as the sidecar would, and what it
// would have forwarded is a 404: nothing but the web server's questions belongs here.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import Koa from 'koa';

import type { AuthLayer } from '../core/auth-layer.js';
import type { AuthConfig } from '../core/config/auth-config.js';
import { ForwardAuth } from '../core/forward-auth/verify.js';
import { wantsJson } from '../core/http/request-view.js';
import { jsonDecision } from '../core/http/responses.js';
import type { PublishingChannel } from '../core/token-store/change-channel.js';
import type { Logger } from '../logging.js';
import type { GatehouseMetrics } from '../metrics/gatehouse-metrics.js';
import type { GatehouseCore } from '../native/types.js';
import type { WebhookReceiverOptions } from '../webhook/config.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { decisionCounter, startGatewayRuntime } from './gateway-runtime.js';
import { endUpgrade, sendGatewayError, writeAnswer } from './answers.js';
import { resolveTrustedProxies } from './gateway.js';
import { toRequestView } from './request-view.js';
import { createRequestListener } from './server.js';
import { routeUpgrades } from './upgrades.js';
import { isVerifyRequest, verifyRoute } from './verify-route.js';

export interface ForwardAuthGatewayOptions {
  readonly config: AuthConfig;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  readonly masterKey?: Buffer;
  readonly webhook?: WebhookReceiverOptions;
  readonly version?: string;
  readonly sessionCacheTtlMs?: number;
  readonly accessLog?: boolean;
  readonly metrics?: GatehouseMetrics;
  /** Who may ask the verify endpoint; default GATEHOUSE_TRUSTED_PROXIES, else loopback. */
  readonly trustedProxies?: string;
  /** How long a /.auth POST body may take to arrive in full (default 30 s). */
  readonly authBodyDeadlineMs?: number;
  /** Where the workers sharing the token store directory tell each other of its changes (serve --workers). */
  readonly storeChannel?: PublishingChannel;
}

export interface ForwardAuthGateway {
  readonly layer: AuthLayer;
  readonly receiver: WebhookReceiver;
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  readonly logger: Logger;
  readonly clientIdleTimeoutMs: number;
  /** Who may ask the verify endpoint, as configured (for the start-up line). */
  readonly trustedProxies: string;
  close(): Promise<void>;
}

export const NO_APP_MESSAGE =
  'Not found: this gatehouse has no app behind it (forward authentication); only the web server in front serves the app.';

/** A connection silent both ways for this long is closed (no request here waits on an app). */
const CLIENT_IDLE_MS = 60_000;

export async function createForwardAuthGateway(options: ForwardAuthGatewayOptions): Promise<ForwardAuthGateway> {
  const { logger } = options;
  const env = options.env ?? process.env;
  const trustedProxies = resolveTrustedProxies(options.trustedProxies, env);
  const { runtime, accessLog } = await startGatewayRuntime(options);
  const { layer } = runtime;
  const receiver = new WebhookReceiver({
    logger,
    core: options.core,
    ...(options.env ? { env: options.env } : {}),
    ...(runtime.redis ? { redis: runtime.redis } : {}),
    ...(options.metrics
      ? { onDelivery: (event: string, status: number) => options.metrics!.delivery(event, status) }
      : {}),
    ...options.webhook,
  });
  const countDecision = decisionCounter(options.metrics, options.config.apiPrefix);
  const forwardAuth = new ForwardAuth({
    layer,
    trustedProxies,
    headers: options.core,
    ...(countDecision ? { onDecision: countDecision } : {}),
  });
  const verify = verifyRoute(forwardAuth, logger);
  const served = createRequestListener(receiver, ownRoutesApp(layer, logger, options.authBodyDeadlineMs), verify);
  const listener = accessLog?.wrap(served) ?? served;
  return {
    layer,
    receiver,
    listener,
    upgrade: routeUpgrades({
      // No app to open a WebSocket with.
      websocket: (req, socket) => {
        endUpgrade(socket, jsonDecision(404, { error: NO_APP_MESSAGE }));
        logger.info({ reason: 'WebSocket handshake without an app', method: req.method }, 'request rejected');
      },
      ordinary: listener,
      // A web server asking about a WebSocket handshake passes its Upgrade on (Caddy): the verify
      // endpoint judges it and answers, then the connection closes.
      plain: (req) => isVerifyRequest(forwardAuth, req),
      logger,
    }),
    logger,
    clientIdleTimeoutMs: CLIENT_IDLE_MS,
    trustedProxies: trustedProxies.description,
    close: () => runtime.close(),
  };
}

/** gatehouse's own routes, decided and answered by the core; a forward has nowhere to go. */
function ownRoutesApp(layer: AuthLayer, logger: Logger, bodyDeadlineMs: number | undefined): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx) => {
    ctx.respond = false;
    const view = toRequestView(ctx.req, 'http', bodyDeadlineMs);
    try {
      const decision = await layer.decide(view);
      writeAnswer(ctx.res, decision.kind === 'respond' ? decision : jsonDecision(404, { error: NO_APP_MESSAGE }));
    } catch (error) {
      logger.error({ err: (error as Error).message, path: ctx.path }, 'auth layer failed');
      sendGatewayError(ctx.res, 500, wantsJson(view));
    }
  });
  return app;
}
