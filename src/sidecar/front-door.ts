// gatehouse's front door: the one Koa application every mode serves (the sidecar in front of an
// app, forward authentication with no app, the webhook receiver alone). The request target is
// parsed once, here, and Koa routes each request through the middleware below, in order
// (docs/architecture.md, "The front door"):
//   1. the target: refused once (400, 501) or parsed once for every route and the core's view;
//   2. the verify endpoint, on its path (when the mode serves it); every other request loses any
//      X-Gatehouse-Webhook-Verified of its own (only gatehouse says a delivery was verified);
//   3. the webhook receiver's Koa middleware, on its path;
//   4. the mode's own: the auth layer with gatehouse's /.auth routes and the protected path.
// WebSocket handshakes leave node's request handling: they are routed here the same way before the
// mode proxies one (upgrades.ts serves every other upgrade as an ordinary request).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import Koa, { type Middleware, type ParameterizedContext } from 'koa';

import type { ForwardAuth } from '../core/forward-auth/verify.js';
import { namesWebhookVerified, WEBHOOK_VERIFIED_HEADER } from '../core/http/webhook-verified.js';
import { closeGracefullyAfter } from '../lingering-close.js';
import type { Logger } from '../logging.js';
import { createKoaMiddleware } from '../webhook/koa-middleware.js';
import type { WebhookReceiver } from '../webhook/receiver.js';
import { errorResponse } from '../webhook/response.js';
import type { AccessLog } from './access-log.js';
import {
  BAD_TARGET_MESSAGE,
  parseTarget,
  UNSUPPORTED_CODING_MESSAGE,
  unsupportedTransferCoding,
  type RequestTarget,
} from './request-target.js';
import { routeUpgrades, type UpgradeListener } from './upgrades.js';
import { verifyEndpoint } from './verify-route.js';

/** What the front door's first middleware leaves for the others: the parsed target. */
export interface FrontDoorState {
  target: RequestTarget;
}

export type FrontDoorContext = ParameterizedContext<FrontDoorState>;
export type FrontDoorMiddleware = Middleware<FrontDoorState>;

/**
 * A WebSocket handshake for the mode to judge and proxy: its target parsed (or the reason it is
 * refused, which the mode answers with its access log line), never the verify endpoint's.
 */
export type WebSocketRoute = (
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: RequestTarget | { readonly refused: string },
) => void;

export interface FrontDoorOptions {
  readonly receiver: WebhookReceiver;
  readonly logger: Logger;
  /** The verify endpoint, in the modes that serve it. */
  readonly verify?: ForwardAuth;
  /** The last middleware: the mode's auth layer (gatehouse's /.auth routes) and protected path. */
  readonly protectedPath: FrontDoorMiddleware;
  /** The mode's WebSocket handshakes (absent: served as ordinary requests). */
  readonly websocket?: WebSocketRoute;
  /** One line per request, when the access log is on (off, the listener is Koa's own). */
  readonly accessLog?: AccessLog;
}

export interface FrontDoor {
  readonly app: Koa<FrontDoorState>;
  /** The server's request listener (serve-requests.ts serves each request in its turn). */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** The server's 'upgrade' listener. */
  readonly upgrade: UpgradeListener;
}

export function createFrontDoor(options: FrontDoorOptions): FrontDoor {
  const { receiver, logger, verify } = options;
  const app = new Koa<FrontDoorState>();
  // Every failure is answered and logged where it happens; Koa would print the rest to stderr.
  app.silent = true;
  app.use(targetOf(logger));
  const verifyAnswer = verify === undefined ? undefined : verifyEndpoint(verify, logger);
  const verifyPath = verify?.path;
  app.use((ctx, next) => {
    if (ctx.state.target.path === verifyPath) return verifyAnswer!(ctx);
    // A verify request keeps it: the header is the original request's, and verify refuses that request.
    stripVerifiedHeader(ctx.req);
    return next();
  });
  const webhook = createKoaMiddleware(receiver);
  const webhookPath = receiver.config.path;
  app.use((ctx, next) => (ctx.state.target.path === webhookPath ? webhook(ctx, next) : next()));
  app.use(options.protectedPath);
  const callback = app.callback();
  const listener = options.accessLog?.wrap(callback) ?? callback;
  const websocket = options.websocket;
  const upgrade = routeUpgrades({
    websocket:
      websocket === undefined
        ? () => false
        : (req, socket, head) => {
            const target = parseTarget(req);
            // Verify judges the handshake a web server asks about: answered as a request.
            if (!('refused' in target) && target.path === verifyPath) return false;
            stripVerifiedHeader(req);
            websocket(req, socket, head, target);
            return true;
          },
    ordinary: listener,
    logger,
  });
  return { app, listener, upgrade };
}

/** The first middleware: the target parsed for the others, or refused with the connection closed. */
function targetOf(logger: Logger): FrontDoorMiddleware {
  return (ctx, next) => {
    const { req } = ctx;
    const target = parseTarget(req);
    if (!('refused' in target) && !unsupportedTransferCoding(req)) {
      ctx.state.target = target;
      return next();
    }
    const [status, reason, message] =
      'refused' in target
        ? [400, target.refused, BAD_TARGET_MESSAGE]
        : [501, 'unsupported transfer coding', UNSUPPORTED_CODING_MESSAGE];
    logger.info({ reason, method: req.method }, 'request rejected');
    const refused = errorResponse(status, message, { closeConnection: true });
    ctx.respond = false;
    closeGracefullyAfter(ctx.res);
    ctx.res.writeHead(refused.status, refused.headers).end(refused.body);
    return Promise.resolve();
  };
}

const VERIFIED_LENGTH = WEBHOOK_VERIFIED_HEADER.length;

/**
 * Removes X-Gatehouse-Webhook-Verified (any spelling) from a request gatehouse serves, whatever its
 * path: with GATEHOUSE_WEBHOOK_FORWARD_PATH elsewhere than the receiver's path, a client could
 * otherwise send the app's delivery path a request of its own, through the proxy, claiming it was
 * verified. Costs a length comparison per header name.
 */
function stripVerifiedHeader(req: IncomingMessage): void {
  const raw = req.rawHeaders;
  let found = false;
  // Every spelling has the name's length: the other headers are passed over without a call.
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.length === VERIFIED_LENGTH && namesWebhookVerified(raw[i]!)) found = true;
  if (!found) return;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (namesWebhookVerified(raw[i]!)) raw.splice(i, 2);
  const headers = req.headers;
  for (const name of Object.keys(headers)) if (namesWebhookVerified(name)) delete headers[name];
}
