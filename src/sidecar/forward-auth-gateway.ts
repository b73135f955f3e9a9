// gatehouse with no app behind it (`gatehouse serve --forward-auth`): a web server in front
// proxies to the app itself and only asks gatehouse. Served: the verify endpoint, gatehouse's
// own routes under the prefix (sign-in, callback, me, refresh, logout), which the web server
// sends here on the app's origin, and the webhook receiver (its built-in handlers: there is no
// app to pass deliveries on to). Any other request is decided as the sidecar would, and what it
// would have forwarded is a 404: nothing but the web server's questions belongs here.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import type { AuthLayer } from '../core/auth-layer.js';
import { wantsJson } from '../core/http/request-view.js';
import { jsonDecision } from '../core/http/responses.js';
import type { Logger } from '../logging.js';
import type { WebhookReceiver } from '../webhook/receiver.js';
import { endUpgrade, sendGatewayError, writeAnswer } from './answers.js';
import { createFrontDoor, toRequestView, type FrontDoorMiddleware } from './front-door.js';
import { resolveTrustedProxies, startGatewayRuntime, type GatewayBaseOptions } from './gateway-runtime.js';

export type ForwardAuthGatewayOptions = GatewayBaseOptions;

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
  const trustedProxies = resolveTrustedProxies(options.trustedProxies, options.env ?? process.env);
  const { runtime, receiver, forwardAuth, accessLog } = await startGatewayRuntime(options, trustedProxies);
  const { layer } = runtime;
  const door = createFrontDoor({
    receiver,
    logger,
    verify: forwardAuth,
    protectedPath: withoutApp(layer, logger, options.authBodyDeadlineMs),
    // No app to open a WebSocket with.
    websocket: (req, socket) => {
      endUpgrade(socket, jsonDecision(404, { error: NO_APP_MESSAGE }));
      logger.info({ reason: 'WebSocket handshake without an app', method: req.method }, 'request rejected');
    },
    ...(accessLog ? { accessLog } : {}),
  });
  return {
    layer,
    receiver,
    listener: door.listener,
    upgrade: door.upgrade,
    logger,
    clientIdleTimeoutMs: CLIENT_IDLE_MS,
    trustedProxies: trustedProxies.description,
    close: () => runtime.close(),
  };
}

/** gatehouse's own routes, decided and answered by the core; a forward has nowhere to go. */
function withoutApp(layer: AuthLayer, logger: Logger, bodyDeadlineMs: number | undefined): FrontDoorMiddleware {
  return async (ctx) => {
    ctx.respond = false;
    const view = toRequestView(ctx.req, ctx.state.target, 'http', bodyDeadlineMs);
    try {
      const decision = await layer.decide(view);
      writeAnswer(ctx.res, decision.kind === 'respond' ? decision : jsonDecision(404, { error: NO_APP_MESSAGE }));
    } catch (error) {
      logger.error({ err: (error as Error).message, path: ctx.path }, 'auth layer failed');
      sendGatewayError(ctx.res, 500, wantsJson(view));
    }
  };
}
