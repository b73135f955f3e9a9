// gatehouse's front door: the one Koa application every mode serves (the sidecar in front of an
// app, forward authentication with no app, the webhook receiver alone). The request is read here
// once (its target checked and split, and the core's view of it, toRequestView, for the modes),
// and Koa routes each request through the middleware below, in order (docs/architecture.md,
// "The front door"):
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
import { BodyTimeoutError, BodyTooLargeError, type RequestView } from '../core/http/request-view.js';
import { namesWebhookVerified, WEBHOOK_VERIFIED_HEADER } from '../core/http/webhook-verified.js';
import { closeGracefullyAfter } from '../lingering-close.js';
import type { Logger } from '../logging.js';
import { BodyReadError, readRawBody } from '../webhook/body.js';
import { createKoaMiddleware } from '../webhook/koa-middleware.js';
import type { WebhookReceiver } from '../webhook/receiver.js';
import { errorResponse } from '../webhook/response.js';
import type { AccessLog } from './access-log.js';
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
    // The scheme of the hop from the web server; the original's comes from X-Forwarded-Proto.
    if (ctx.state.target.path === verifyPath)
      return verifyAnswer!(ctx, toRequestView(ctx.req, ctx.state.target, 'http'));
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

// The request target (RFC 9112 §3.2). Browsers send the origin form (`/path?query`); a server
// must also accept the absolute form (`http://host/path?query`), which some clients send when
// configured to use gatehouse as a proxy. Routing, excluded paths and the app all work on the
// origin form, so an absolute target is turned into one first.

/** The outcome for a request's target: ok (it is in origin form now, rewritten if it was absolute), or refused. */
type TargetCheck = { readonly kind: 'ok' } | { readonly kind: 'refused'; readonly reason: string };

const ABSOLUTE = /^https?:\/\/([^/?#]*)(.*)$/i;

/**
 * Rewrites an absolute-form `req.url` to its origin form, keeping the path's bytes exactly (no URL
 * normalization: the app must see what the client sent). The authority must name the same host as
 * the Host header, and there must be one Host header: a client that says two different things is
 * refused rather than believed either way.
 */
function toOriginForm(req: {
  url?: string | undefined;
  headers: { host?: string | undefined };
  rawHeaders: readonly string[];
}): TargetCheck {
  // node keeps the first of several Host headers; a server must refuse such a request (RFC 9112 §3.2).
  if (hostHeaders(req.rawHeaders) > 1) return { kind: 'refused', reason: 'more than one Host header' };
  const url = req.url ?? '';
  if (url.charCodeAt(0) === 0x2f /* '/' */) return OK;
  // `*` (the asterisk form, OPTIONS for the whole server) names no resource of the app's.
  if (url === '*') return { kind: 'refused', reason: 'asterisk-form request target' };
  const absolute = ABSOLUTE.exec(url);
  if (absolute === null) return OK; // anything else: left to the usual checks, which refuse what they cannot route
  const [, authority, rest] = absolute as unknown as [string, string, string];
  if (authority.toLowerCase() !== (req.headers.host ?? '').toLowerCase())
    return { kind: 'refused', reason: 'request target names another host than Host' };
  if (rest.includes('#')) return { kind: 'refused', reason: 'request target has a fragment' };
  req.url = rest === '' ? '/' : rest.charCodeAt(0) === 0x3f /* '?' */ ? `/${rest}` : rest;
  return OK;
}

const OK: TargetCheck = { kind: 'ok' };

/** A request target in origin form, split once: the path (raw, not decoded) and the query (without `?`). */
export interface RequestTarget {
  readonly path: string;
  readonly query: string;
}

/**
 * The request's target, parsed once for every route and the core's view of the request: made
 * origin-form (toOriginForm), then split at the first `?`. Refused as toOriginForm refuses.
 */
export function parseTarget(req: Parameters<typeof toOriginForm>[0]): RequestTarget | { readonly refused: string } {
  const check = toOriginForm(req);
  if (check.kind === 'refused') return { refused: check.reason };
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

function hostHeaders(raw: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}

/** What a refused target gets, from the front door and the WebSocket handshake route alike. */
export const BAD_TARGET_MESSAGE = 'Bad request target.';

/**
 * A body coded with anything but chunked alone (`gzip, chunked`): node's parser undoes the
 * chunking only, and passing the rest on would hand the app coded bytes it was never told about.
 * Refused as RFC 9112 §6.1 says, with 501, as nginx does.
 */
export function unsupportedTransferCoding(req: { headers: { 'transfer-encoding'?: string | undefined } }): boolean {
  const coding = req.headers['transfer-encoding'];
  return coding !== undefined && coding.trim().toLowerCase() !== 'chunked';
}

export const UNSUPPORTED_CODING_MESSAGE = 'Transfer codings other than chunked are not supported.';

// The core's view of the request (docs/architecture.md, "The decision").

function pairs(raw: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/**
 * How long a /.auth body (a form_post callback, a token exchange: 64 KiB at most) may take to
 * arrive in full. The IIS module has the same deadline (kAuthBodyDeadlineMs in
 * binding/iis/gatehouse_module.cpp).
 */
export const DEFAULT_AUTH_BODY_DEADLINE_MS = 30_000;

/**
 * The core's view of a node:http request, whose target the front door parsed (`target`). The body
 * is read only if the core asks (for /.auth/* POSTs), and within `bodyDeadlineMs` in all: the
 * connection's idle timeout alone would let a client that drips a byte now and then hold the
 * request, and its small buffer, for hours.
 */
export function toRequestView(
  req: IncomingMessage,
  target: RequestTarget,
  scheme: 'http' | 'https',
  bodyDeadlineMs = DEFAULT_AUTH_BODY_DEADLINE_MS,
): RequestView {
  return {
    method: req.method ?? 'GET',
    path: target.path,
    query: target.query,
    headers: pairs(req.rawHeaders),
    scheme,
    host: req.headers.host ?? '',
    remoteAddress: req.socket.remoteAddress ?? '',
    readBody: async (limit) => {
      try {
        // Timed by the deadline alone: within it, pauses do not matter.
        return await readRawBody(req, {
          limitBytes: limit,
          timeoutMs: bodyDeadlineMs,
          deadlineMs: bodyDeadlineMs,
          declaredLength: req.headers['content-length'],
        });
      } catch (error) {
        if (!(error instanceof BodyReadError)) throw error;
        if (error.failure === 'too-large') throw new BodyTooLargeError(limit);
        if (error.failure === 'timeout') throw new BodyTimeoutError(bodyDeadlineMs);
        throw error; // aborted, or shorter than its Content-Length: unreadable
      }
    },
  };
}
