// The Koa sidecar: every request goes through AuthLayer.decide; a forward is
// proxied to the app (koa-proxies, streamed, keep-alive) with normalized
// identity headers, a respond is written as is. WebSocket upgrades get the
// same decision before they are proxied.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';

import HttpProxy from 'http-proxy';
import Koa from 'koa';
import proxies from 'koa-proxies';

import type { AuthLayer } from '../core/auth-layer.js';
import { requestOrigin } from '../core/http/origin.js';
import { wantsJson, type Decision } from '../core/http/request-view.js';
import type { Logger } from '../logging.js';
import type { GatehouseCore } from '../native/types.js';
import { forwardHeaders } from './forward-headers.js';
import { toRequestView } from './request-view.js';
import { sendUpstreamError } from './upstream-errors.js';

export interface SidecarOptions {
  readonly layer: AuthLayer;
  readonly upstream: string;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  /** Upstream answer timeout, ms (default 60 s). */
  readonly upstreamTimeoutMs?: number;
  /** Whether the listener is TLS (else the scheme comes from trusted forwarded headers, or http). */
  readonly tls?: boolean;
}

const STARTED = Symbol('gatehouse.forwardStarted');
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

function writeDecision(res: ServerResponse, decision: Extract<Decision, { kind: 'respond' }>): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(decision.headers)) headers[name] = typeof value === 'string' ? value : [...value];
  const body = decision.body ?? Buffer.alloc(0);
  res.writeHead(decision.status, { ...headers, 'Content-Length': String(body.length) });
  res.end(body);
}

export function createSidecar(options: SidecarOptions): Sidecar {
  const { layer, core, logger } = options;
  const config = layer.config;
  const timeoutMs = options.upstreamTimeoutMs ?? 60_000;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const normalizeOptions = { prefix: config.headerPrefix, exposeTokens: config.tokenStore.enabled };
  const trustForwardedFor = config.forwardProxy.convention !== 'NoProxy';

  /** Decides; for a forward, also rewrites the request's headers to what the app must receive. */
  async function authorize(req: IncomingMessage, upgrade: boolean): Promise<Decision> {
    const view = toRequestView(req, options.tls ? 'https' : 'http');
    const decision = await layer.decide(view);
    if (decision.kind === 'forward') {
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
      sendUpstreamError(ctx.res, 502, nodeWantsJson(ctx.req));
      return;
    }
    if (decision.kind === 'respond') {
      ctx.respond = false;
      writeDecision(ctx.res, decision);
      return;
    }
    (ctx.req as Tagged)[STARTED] = performance.now();
    await next();
  });
  app.use(
    proxies('/', {
      target: options.upstream,
      changeOrigin: false,
      agent,
      // Only what forwardHeaders set: http-proxy's own xfwd would append to client values.
      xfwd: false,
      // http-proxy aborts the upstream request after this long (then the error below decides 504).
      proxyTimeout: timeoutMs,
      events: {
        error: (error: NodeJS.ErrnoException, req, res) => {
          // An abort by proxyTimeout surfaces as a reset; what tells it apart is how long it took.
          const started = (req as Tagged)[STARTED];
          const timedOut = started !== undefined && performance.now() - started >= timeoutMs - 5;
          logger.error({ path: (req.url ?? '').split('?')[0], reason: timedOut ? 'upstream timeout' : error.code ?? error.message }, 'upstream request failed');
          sendUpstreamError(res, timedOut ? 504 : 502, nodeWantsJson(req));
        },
      },
    } as proxies.IKoaProxiesOptions),
  );

  const wsProxy = HttpProxy.createProxyServer({ target: options.upstream, ws: true, xfwd: false });
  wsProxy.on('error', (error, _req, socket) => {
    logger.error({ reason: (error as NodeJS.ErrnoException).code ?? error.message }, 'upstream websocket failed');
    if ('destroy' in socket) (socket as Duplex).destroy();
  });

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    authorize(req, true).then(
      (decision) => {
        if (decision.kind === 'respond') {
          const lines = [`HTTP/1.1 ${decision.status} ${http.STATUS_CODES[decision.status] ?? ''}`];
          for (const [name, value] of Object.entries(decision.headers)) for (const v of typeof value === 'string' ? [value] : value) lines.push(`${name}: ${v}`);
          const body = decision.body ?? Buffer.alloc(0);
          lines.push(`Content-Length: ${body.length}`, 'Connection: close');
          socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]));
          return;
        }
        wsProxy.ws(req, socket, head);
      },
      (error: unknown) => {
        logger.error({ err: (error as Error).message }, 'auth layer failed on upgrade');
        socket.destroy();
      },
    );
  }

  return {
    app,
    handleUpgrade,
    close: () => {
      agent.destroy();
      wsProxy.close();
    },
  };
}
