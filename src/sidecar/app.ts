// The sidecar's protected path, the last of the front door's Koa middleware (front-door.ts):
// every request goes through AuthLayer.decide; a forward is sent to the app (forward-to-app.ts,
// on undici: framed, bounded, abortable) with the core's header edits applied (forwardHeaders,
// below), a respond (gatehouse's /.auth routes, challenges, refusals) is written as is. WebSocket
// handshakes get the same decision before they are proxied (websocket-proxy.ts).
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';

import type { Pool } from 'undici';

import type { AuthLayer } from '../core/auth-layer.js';
import type { ForwardEdits } from '../core/http/header-policy.js';
import { wantsJson, type Decision, type RespondDecision } from '../core/http/request-view.js';
import { jsonDecision } from '../core/http/responses.js';
import type { Logger } from '../logging.js';
import type { AccessLog } from './access-log.js';
import { endUpgrade, gatewayError, sendGatewayError, writeAnswer } from './answers.js';
import type { DownloadRate } from './download-rate.js';
import { AppForwarder, HOP_BY_HOP, namedByConnection } from './forward-to-app.js';
import { loggedPath } from './logged-path.js';
import {
  BAD_TARGET_MESSAGE,
  toRequestView,
  type FrontDoorMiddleware,
  type RequestTarget,
  type WebSocketRoute,
} from './front-door.js';
import { upstreamAgent } from './upstream-agent.js';
import {
  DEFAULT_UPSTREAM_CONNECTIONS,
  DEFAULT_UPSTREAM_QUEUE,
  DEFAULT_UPSTREAM_WEBSOCKETS,
} from './upstream-limits.js';
import { upstreamPool } from './upstream-pool.js';
import { DEFAULT_UPSTREAM_TIMEOUT_MS } from './upstream-timeout.js';
import { webSocketProxy } from './websocket-proxy.js';

export interface SidecarOptions {
  readonly layer: AuthLayer;
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
  /** Connections to the app at most (default DEFAULT_UPSTREAM_CONNECTIONS). */
  readonly upstreamConnections?: number;
  /** Requests that may wait for a connection to the app; past them, 503 (default DEFAULT_UPSTREAM_QUEUE). */
  readonly upstreamQueue?: number;
  /** WebSocket connections open at once at most; past them, 503 (default DEFAULT_UPSTREAM_WEBSOCKETS). */
  readonly upstreamWebSockets?: number;
  /** Told what became of each request judged (metrics). */
  readonly onDecision?: (path: string, decision: Decision) => void;
  /** How fast clients must read answers (default: the forwarder's minimum rate). */
  readonly downloadRate?: DownloadRate;
  /** Told of each request the app did not answer (metrics). */
  readonly onUpstreamFailure?: (kind: 'timeout' | 'error' | 'full') => void;
}

/** How long a keep-alive connection to the app may sit idle before gatehouse closes it. */
const UPSTREAM_IDLE_MS = 30_000;

export interface Sidecar {
  /** The front door's last middleware: decided, then answered or forwarded to the app. */
  readonly protectedPath: FrontDoorMiddleware;
  /** WebSocket handshakes: decided, then answered or proxied. */
  readonly websocket: WebSocketRoute;
  readonly forwarder: AppForwarder;
  /** The connections to the app, for every request forwarded and every webhook delivery passed on. */
  readonly pool: Pool;
  close(): void;
}

/** wantsJson for a node request whose headers are all the host still has. */
function nodeWantsJson(req: IncomingMessage): boolean {
  return wantsJson({ headers: Object.entries(req.headers).map(([name, value]) => [name, String(value)] as const) });
}

// The app's copy of a request: the core's edit list applied (identity aliases and spoofable
// forwarding headers removed, identity and X-Forwarded-* set: core/http/header-policy.ts), without
// the client's hop (hop-by-hop fields and what its Connection names, the framing, Expect:
// forward-to-app.ts).

/**
 * Request fields of the client's hop that are not hop-by-hop by name. `Content-Length`: the body's
 * framing toward the app is the forwarder's to write (undici writes the length of what it sends,
 * or chunks it), from the framing node's parser read. `Expect`: gatehouse answers the client's
 * `100-continue` itself when it starts reading the body (expect-continue.ts).
 */
const NOT_PASSED_ON = new Set(['content-length', 'expect']);

const lowerCased = new WeakMap<ReadonlyArray<readonly [string, string]>, ReadonlyArray<readonly [string, string]>>();

/** The identity headers with node's lower-case names, made once per set (the core shares one set per identity). */
function lowerCaseNames(set: ReadonlyArray<readonly [string, string]>): ReadonlyArray<readonly [string, string]> {
  let lower = lowerCased.get(set);
  if (lower === undefined) {
    lower = set.map(([name, value]) => [name.toLowerCase(), value] as const);
    lowerCased.set(set, lower);
  }
  return lower;
}

/**
 * The headers to forward, as a new object (node's lower-cased shape): hop-by-hop headers, every
 * header the `Connection` header names and every header the edits remove are left out, then the
 * edits' headers are added. A hostile `Connection` header naming identity or X-Forwarded-*
 * headers therefore removes only client headers. (A fresh object, not deletes on node's:
 * deleting turns an object into a slow dictionary for every later copy.) WebSocket handshakes
 * keep `Connection: Upgrade` and `Upgrade`.
 */
export function forwardHeaders(
  headers: IncomingHttpHeaders,
  edits: ForwardEdits,
  upgrade: boolean,
): IncomingHttpHeaders {
  // Browsers send `Connection: keep-alive`: a name dropped anyway needs no set.
  const named = headers.connection === undefined ? undefined : namedByConnection(headers.connection);
  const { remove } = edits;
  const out: IncomingHttpHeaders = {};
  for (const name of Object.keys(headers)) {
    const drop =
      HOP_BY_HOP.has(name) ||
      NOT_PASSED_ON.has(name) ||
      (named !== undefined && named.length > 0 && named.includes(name)) ||
      (remove.length > 0 && remove.includes(name));
    if (drop && !(upgrade && (name === 'upgrade' || name === 'connection'))) continue;
    out[name] = headers[name];
  }
  if (upgrade) out.connection = 'Upgrade';
  for (const [name, value] of lowerCaseNames(edits.set)) out[name] = value;
  out['x-forwarded-for'] = edits.forwarded.for;
  out['x-forwarded-proto'] = edits.forwarded.proto;
  out['x-forwarded-host'] = edits.forwarded.host;
  // A body of known length goes on with that length (undici checks it sends exactly that many bytes).
  const length = headers['content-length'];
  if (length !== undefined && headers['transfer-encoding'] === undefined && !upgrade) out['content-length'] = length;
  return out;
}

export function createSidecar(options: SidecarOptions): Sidecar {
  const { layer, logger, accessLog } = options;
  const timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const upstreamUrl = new URL(options.upstream);
  const connections = options.upstreamConnections ?? DEFAULT_UPSTREAM_CONNECTIONS;
  const pool = upstreamPool(upstreamUrl, { connections, timeoutMs, idleMs: UPSTREAM_IDLE_MS });
  const forwarder = new AppForwarder({
    pool,
    maxInFlight: connections + (options.upstreamQueue ?? DEFAULT_UPSTREAM_QUEUE),
    timeoutMs,
    logger,
    wantsJson: nodeWantsJson,
    ...(options.downloadRate ? { downloadRate: options.downloadRate } : {}),
    ...(options.onUpstreamFailure ? { onUpstreamFailure: options.onUpstreamFailure } : {}),
  });
  // WebSocket handshakes take a connection of their own, used once.
  const singleUse = upstreamAgent(upstreamUrl, { keepAlive: false });
  const websocket = webSocketProxy({
    upstream: upstreamUrl,
    agent: singleUse,
    timeoutMs,
    logger,
    wantsJson: nodeWantsJson,
    forwarder,
    maxOpen: options.upstreamWebSockets ?? DEFAULT_UPSTREAM_WEBSOCKETS,
    idleMs: timeoutMs,
    ...(accessLog ? { accessLog } : {}),
  });

  /** Decides; for a forward, also the headers the app must receive (the core's edits, applied). */
  async function authorize(
    req: IncomingMessage,
    target: RequestTarget,
    upgrade: boolean,
  ): Promise<{ decision: Decision; headers?: OutgoingHttpHeaders }> {
    const view = toRequestView(req, target, options.tls ? 'https' : 'http', options.authBodyDeadlineMs);
    const decision = await layer.decide(view);
    options.onDecision?.(view.path, decision);
    if (decision.kind !== 'forward') return { decision };
    if (decision.identity !== null) accessLog?.identify(req, decision.identity);
    return { decision, headers: forwardHeaders(req.headers, decision.edits, upgrade) };
  }

  const protectedPath: FrontDoorMiddleware = async (ctx) => {
    // The app's answer is streamed by the forwarder; gatehouse's own is written as the core made it.
    ctx.respond = false;
    let decided: Awaited<ReturnType<typeof authorize>>;
    try {
      decided = await authorize(ctx.req, ctx.state.target, false);
    } catch (error) {
      logger.error({ err: (error as Error).message, path: ctx.path }, 'auth layer failed');
      sendGatewayError(ctx.res, 500, nodeWantsJson(ctx.req));
      return;
    }
    if (decided.decision.kind === 'respond') {
      writeAnswer(ctx.res, decided.decision);
      return;
    }
    // Gone while it was decided, or its body refused meanwhile (and answered): nothing to send the app.
    if (ctx.res.headersSent || ctx.res.destroyed) return;
    forwarder.forward(ctx.req, ctx.res, decided.headers!);
  };

  const websocketRoute: WebSocketRoute = (req, socket, head, target) => {
    // node hands an upgraded socket over with no 'error' listener: until one is added, a reset
    // from the client would be an uncaught error that ends the process.
    socket.on('error', (error: NodeJS.ErrnoException) =>
      logger.debug(
        { path: loggedPath(req), reason: error.code ?? error.message },
        'client connection failed during upgrade',
      ),
    );
    accessLog?.begin(req);
    /** Answers the handshake itself, with its line in the access log. */
    const answer = (decision: RespondDecision): void => {
      endUpgrade(socket, decision);
      accessLog?.end(req, decision.status, true);
    };
    // Matched on the origin form of the target, as every request is (front-door.ts).
    if ('refused' in target) {
      logger.info({ reason: target.refused, method: req.method }, 'request rejected');
      answer(jsonDecision(400, { error: BAD_TARGET_MESSAGE }));
      return;
    }
    authorize(req, target, true).then(
      ({ decision, headers }) => {
        if (decision.kind === 'respond') {
          answer(decision);
          return;
        }
        if (socket.destroyed) {
          accessLog?.end(req, undefined, false);
          return; // gone while it was decided: nothing to open at the app
        }
        websocket(req, socket, head, headers!);
      },
      (error: unknown) => {
        logger.error({ err: (error as Error).message, path: loggedPath(req) }, 'auth layer failed on upgrade');
        answer(gatewayError(500, nodeWantsJson(req)));
      },
    );
  };

  return {
    protectedPath,
    websocket: websocketRoute,
    forwarder,
    pool,
    close: () => {
      void pool.destroy();
      singleUse.destroy();
    },
  };
}
