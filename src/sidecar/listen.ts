import { once } from 'node:events';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  readonly server: Server;
  readonly url: string;
  /** Closes the server and every connection at once, requests in progress included. */
  close(): Promise<void>;
  /**
   * A graceful stop: no new connections; idle keep-alive connections are closed now, busy ones
   * answer their request in progress (with `Connection: close`) and then close; whatever is still
   * open after `graceMs` is closed. Resolves with whether everything finished in time.
   */
  drain(graceMs: number): Promise<boolean>;
}

/** How often connections that have just become idle are closed while draining. */
const DRAIN_SWEEP_MS = 100;

/** How long a request's headers may take to arrive in full (node's own default). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;

export interface ListenOptions {
  /** How long a request's headers may take to arrive in full, ms (default DEFAULT_HEADERS_TIMEOUT_MS). */
  readonly headersTimeoutMs?: number;
}

/** Retry-After of the answer given while gatehouse is starting (seconds). */
export const STARTING_RETRY_AFTER_SECONDS = 1;

const STARTING_BODY = JSON.stringify({ error: 'gatehouse is starting: try again in a moment.' });

/**
 * Answers a request that arrives before the server's handler is attached (a readiness probe, a
 * browser already pointed at the port) with 503 and Retry-After, instead of leaving it unanswered.
 * It stands aside as soon as any other request listener is there, and serveRequests removes it.
 */
function answerWhileStarting(this: http.Server, _req: http.IncomingMessage, res: http.ServerResponse): void {
  if (this.listenerCount('request') > 1) return;
  res.shouldKeepAlive = false;
  res.writeHead(503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Retry-After': String(STARTING_RETRY_AFTER_SECONDS),
    'Content-Length': Buffer.byteLength(STARTING_BODY),
  });
  res.end(STARTING_BODY);
}

/** Makes `server` answer its own requests from now on: the start-up answer stands aside. */
export function startServing(server: http.Server): void {
  server.off('request', answerWhileStarting);
}

/**
 * A server listening before it has a handler, so its URL can be known first (the dev provider
 * needs it). Until a handler is attached, every request is answered 503 with Retry-After.
 */
export async function listenEarly(host: string, port: number, options: ListenOptions = {}): Promise<Listening> {
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  // node checks for requests past their header timeout every connectionsCheckingInterval (30 s by
  // default), so headers dripped slowly held a connection up to 90 s; checked this often, a
  // connection is closed at most a second (or a quarter of the timeout) after its limit.
  const server = http.createServer({
    headersTimeout,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 4))),
  });
  // Every header is kept (node's maxHeaderSize, 16 KiB, still bounds them all): by default node
  // drops those past about a thousand without a word, and a web server in front that passes them
  // all on (Caddy, Traefik) would hand the app forged identity headers verify never saw.
  server.maxHeadersCount = 0;
  server.on('request', answerWhileStarting);
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    drain: (graceMs) =>
      new Promise((resolve) => {
        // Ahead of every handler: from now on, each answer ends its connection. Requests that
        // expect a 100 Continue arrive as 'checkContinue' instead, when the server listens for it
        // (only then: a first such listener would take those requests from 'request').
        const closeAfterAnswer = (_req: unknown, res: http.ServerResponse): void => {
          res.shouldKeepAlive = false;
        };
        server.prependListener('request', closeAfterAnswer);
        if (server.listenerCount('checkContinue') > 0) server.prependListener('checkContinue', closeAfterAnswer);
        // A request that arrived just before the drain may already be answered with keep-alive:
        // its connection is idle a moment later and closed by the next sweep.
        const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS);
        const deadline = setTimeout(() => {
          clearInterval(sweep);
          server.closeAllConnections();
          resolve(false);
        }, graceMs);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(deadline);
          resolve(true);
        });
      }),
  };
}
