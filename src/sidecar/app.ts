// The Koa sidecar: every request goes through AuthLayer.decide; a forward is
// proxied to the app (koa-proxies, streamed, keep-alive) with normalized
// identity headers, a respond is written as is. WebSocket upgrades get the
// same decision before they are proxied.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';

import HttpProxy from 'http-proxy';
import Koa from 'koa';
import proxies from 'koa-proxies';

import type { AuthLayer } from '../core/auth-layer.js';
import { behindTrustedProxy, requestOrigin } from '../core/http/origin.js';
import { wantsJson, type Decision, type RespondDecision } from '../core/http/request-view.js';
import { jsonDecision } from '../core/http/responses.js';
import type { Logger } from '../logging.js';
import type { GatehouseCore } from '../native/types.js';
import type { AccessLog } from './access-log.js';
import { cutOffWhenTheAppBreaksOff } from './broken-answers.js';
import { forwardHeaders } from './forward-headers.js';
import { loggedPath } from './logged-path.js';
import { keepHopByHopOnTheAppsHop } from './response-headers.js';
import { toRequestView } from './request-view.js';
import { StaleConnectionRetry } from './stale-connection.js';
import { upstreamAgent } from './upstream-agent.js';
import { DEFAULT_UPSTREAM_TIMEOUT_MS } from './upstream-timeout.js';
import { endUpgrade, gatewayError, sendGatewayError, writeAnswer } from './answers.js';
import { BAD_TARGET_MESSAGE, toOriginForm } from './request-target.js';

export interface SidecarOptions {
  readonly layer: AuthLayer;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  /** The app's origin, `scheme://host[:port]`, as parseUpstreamUrl gives it. */
  readonly upstream: string;
  /** How long the app may stay silent on a request, ms (default 60 s; upstream-timeout.ts). */
  readonly upstreamTimeoutMs?: number;
  /** How long a /.auth POST body may take to arrive in full, ms (default DEFAULT_AUTH_BODY_DEADLINE_MS). */
  readonly authBodyDeadlineMs?: number;
  /** Whether the listener is TLS (else the scheme comes from trusted forwarded headers, or http). */
  readonly tls?: boolean;
  /** The access log, when it is on: told who made each forwarded request, and writes the WebSocket handshakes' lines. */
  readonly accessLog?: AccessLog;
}

const STARTED = Symbol('gatehouse.forwardStarted');
/** How long a keep-alive connection to the app may sit idle before gatehouse closes it. */
export const UPSTREAM_IDLE_MS = 30_000;
type Tagged = IncomingMessage & { [STARTED]?: number };

export interface Sidecar {
  readonly app: Koa;
  readonly handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  close(): void;
}

/** wantsJson for a node request whose headers are all the host still has. */
function nodeWantsJson(req: IncomingMessage): boolean {
  return wantsJson({ headers: Object.entries(req.headers).map(([name, value]) => [name, String(value)] as const) });
}

export function createSidecar(options: SidecarOptions): Sidecar {
  const { layer, core, logger, accessLog } = options;
  const config = layer.config;
  const timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  // `timeout` closes connections idle that long; it also makes node honour an app's announced
  // idle timeout (`Keep-Alive: timeout=N`, closed a second before it), which node ignores when
  // the agent has none. A request in flight is governed by proxyTimeout instead.
  const upstreamUrl = new URL(options.upstream);
  const agent = upstreamAgent(upstreamUrl, { keepAlive: true, maxSockets: 512, timeout: UPSTREAM_IDLE_MS });
  // Retries and WebSocket handshakes take a connection of their own, used once.
  const singleUse = upstreamAgent(upstreamUrl, { keepAlive: false });
  const normalizeOptions = { prefix: config.headerPrefix, exposeTokens: config.tokenStore.enabled };
  const trustForwardedFor = behindTrustedProxy(config);

  /** Decides; for a forward, also rewrites the request's headers to what the app must receive. */
  async function authorize(req: IncomingMessage, upgrade: boolean): Promise<Decision> {
    const view = toRequestView(req, options.tls ? 'https' : 'http', options.authBodyDeadlineMs);
    const decision = await layer.decide(view);
    if (decision.kind === 'forward') {
      if (decision.identity !== null) accessLog?.identify(req, decision.identity);
      const origin = requestOrigin(view, config) ?? { scheme: view.scheme, host: view.host };
      req.headers = forwardHeaders(req.headers, view.headers, decision.identity, core, normalizeOptions, {
        remoteAddress: view.remoteAddress,
        scheme: origin.scheme,
        host: origin.host,
        trustForwardedFor,
        upgrade,
      });
    }
    return decision;
  }

  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    let decision: Decision;
    try {
      decision = await authorize(ctx.req, false);
    } catch (error) {
      logger.error({ err: (error as Error).message, path: ctx.path }, 'auth layer failed');
      ctx.respond = false;
      sendGatewayError(ctx.res, 500, nodeWantsJson(ctx.req));
      return;
    }
    if (decision.kind === 'respond') {
      ctx.respond = false;
      writeAnswer(ctx.res, decision);
      return;
    }
    (ctx.req as Tagged)[STARTED] = performance.now();
    // The answer is written by the proxy, a retry or the error page, never by Koa: after a failed
    // first attempt koa-proxies sets a status and returns while a retry may still be under way.
    ctx.respond = false;
    try {
      await next();
    } catch (error) {
      // koa-proxies rejects when the client goes away before the answer is written: nothing to log or send.
      if (ctx.res.headersSent || ctx.res.destroyed) return;
      logger.error({ err: (error as Error).message, path: loggedPath(ctx.req) }, 'proxying failed');
      sendGatewayError(ctx.res, 502, nodeWantsJson(ctx.req));
    }
  });

  const watchAnswer = cutOffWhenTheAppBreaksOff((req) => logger.error({ path: loggedPath(req), reason: 'the app broke off its answer' }, 'upstream request failed'));
  const onAnswer = (proxyRes: IncomingMessage, req: IncomingMessage, res: ServerResponse): void => {
    keepHopByHopOnTheAppsHop(proxyRes, req, res);
    watchAnswer(proxyRes, req, res);
  };
  const staleConnections = new StaleConnectionRetry();
  // The one retry after a stale keep-alive connection: a new connection, used once.
  const retryProxy = HttpProxy.createProxyServer({ target: options.upstream, xfwd: false, proxyTimeout: timeoutMs, agent: singleUse });
  retryProxy.on('proxyRes', onAnswer);
  function onUpstreamError(error: NodeJS.ErrnoException, req: IncomingMessage, res: ServerResponse): void {
    // An abort by proxyTimeout surfaces as a reset; what tells it apart is how long it took.
    const started = (req as Tagged)[STARTED];
    const timedOut = started !== undefined && performance.now() - started >= timeoutMs - 5;
    const path = loggedPath(req);
    if (!timedOut && staleConnections.shouldRetry(error, req, res)) {
      logger.debug({ path, reason: error.code }, 'upstream connection closed by the app as it was reused; sending the request again');
      (req as Tagged)[STARTED] = performance.now();
      retryProxy.web(req, res, {}, (retryError) => onUpstreamError(retryError as NodeJS.ErrnoException, req, res));
      return;
    }
    logger.error({ path, reason: timedOut ? 'upstream timeout' : error.code ?? error.message }, 'upstream request failed');
    sendGatewayError(res, timedOut ? 504 : 502, nodeWantsJson(req));
  }
  app.use(
    proxies('/', {
      target: options.upstream,
      changeOrigin: false,
      agent,
      // Only what forwardHeaders set: http-proxy's own xfwd would append to client values.
      xfwd: false,
      // http-proxy aborts the upstream request after this long (then the error below decides 504).
      proxyTimeout: timeoutMs,
      events: { error: onUpstreamError, proxyReq: staleConnections.noteAttempt, proxyRes: onAnswer },
    } as proxies.IKoaProxiesOptions),
  );

  const wsProxy = HttpProxy.createProxyServer({ target: options.upstream, ws: true, xfwd: false, agent: singleUse });
  wsProxy.on('proxyReqWs', (proxyReq, req, socket) => {
    // A client that leaves before the app has answered its upgrade: the app's half is closed too.
    const abandon = (): void => {
      proxyReq.destroy();
      accessLog?.end(req, undefined, false);
    };
    socket.once('close', abandon);
    proxyReq.once('upgrade', () => {
      socket.off('close', abandon);
      accessLog?.end(req, 101, true);
    });
    // The app declined the upgrade with an ordinary answer, which http-proxy passes on as it is.
    if (accessLog) proxyReq.once('response', (answer: IncomingMessage) => accessLog.end(req, answer.statusCode, true));
  });
  wsProxy.on('error', (error, req, socket) => {
    accessLog?.end(req, undefined, false);
    const client = 'destroy' in socket ? (socket as Duplex) : undefined;
    // Already gone: the client left first, and its upstream request was abandoned above.
    if (client?.destroyed) logger.debug({ path: loggedPath(req) }, 'client left before the app answered its upgrade');
    else logger.error({ reason: (error as NodeJS.ErrnoException).code ?? error.message }, 'upstream websocket failed');
    client?.destroy();
  });

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // node hands an upgraded socket over with no 'error' listener, and http-proxy adds one only
    // once the app has switched protocols: until then a reset from the client would be an
    // uncaught error that ends the process.
    socket.on('error', (error: NodeJS.ErrnoException) => logger.debug({ path: loggedPath(req), reason: error.code ?? error.message }, 'client connection failed during upgrade'));
    accessLog?.begin(req);
    /** Answers the handshake itself, with its line in the access log. */
    const answer = (decision: RespondDecision): void => {
      endUpgrade(socket, decision);
      accessLog?.end(req, decision.status, true);
    };
    // Matched on the origin form of the target, as the request listener does (request-target.ts).
    const target = toOriginForm(req);
    if (target.kind === 'refused') {
      logger.info({ reason: target.reason, method: req.method }, 'request rejected');
      answer(jsonDecision(400, { error: BAD_TARGET_MESSAGE }));
      return;
    }
    authorize(req, true).then(
      (decision) => {
        if (decision.kind === 'respond') {
          answer(decision);
          return;
        }
        if (socket.destroyed) {
          accessLog?.end(req, undefined, false);
          return; // gone while it was decided: nothing to open at the app
        }
        wsProxy.ws(req, socket, head);
      },
      (error: unknown) => {
        logger.error({ err: (error as Error).message, path: loggedPath(req) }, 'auth layer failed on upgrade');
        answer(gatewayError(500, nodeWantsJson(req)));
      },
    );
  }

  return {
    app,
    handleUpgrade,
    close: () => {
      agent.destroy();
      singleUse.destroy();
      wsProxy.close();
      retryProxy.close();
    },
  };
}
