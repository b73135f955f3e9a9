// The server events every gatehouse server answers, whatever it serves: requests (those that
// expect a 100 Continue included), CONNECT, and requests node's parser refuses. One place, so
// that the sidecar and the webhook-only server cannot drift apart when node adds another way
// for a request to arrive outside 'request'. Here too: which request each connection is on, for a
// parse error of its body (client-errors.ts).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import { closeGracefullyAfter } from '../lingering-close.js';
import type { Logger } from '../logging.js';
import { answerClientError } from './client-errors.js';
import { deferContinue } from './expect-continue.js';
import { startServing } from './listen.js';
import { refuseConnect } from './refuse-connect.js';

/**
 * Serves each request in its turn. node parses requests pipelined on one connection as they come
 * and hands each over at once, though it answers them in order. A pipelined request is taken up
 * only once the answers before it are done (its response then gets the connection): so when one of
 * those answers closes the connection (a refusal, an HTTP/1.0 client), no request behind it ever
 * reaches the app or gatehouse's own routes, and one connection holds at most one place among the
 * requests in flight to the app. Clients that do not pipeline (browsers) are served at once.
 */
function inTurn(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  logger: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const socket = req.socket;
    // The connection is closing (its last answer is out, and the writing side ended): a request
    // that node still parsed from bytes that came with that answer's request is never served.
    if (socket.writableEnded || socket.destroyed) return;
    if (res.socket !== null) {
      listener(req, res);
      return;
    }
    // Queued: node goes on reading and parsing whatever the client pipelines while nothing is
    // answered, so the queue of one connection is bounded. Past it, nothing more is read or served
    // on the connection: the requests within the bound are answered, the last of them with
    // `Connection: close`, and the connection closes gracefully behind it (HTTP/1.1 lets a client
    // retry what got no answer). Never silence: the requests answered are still answered.
    if (overflowed.has(socket)) return;
    const queued = (waiting.get(socket) ?? 0) + 1;
    if (queued > MAX_PIPELINED_WAITING) {
      overflowed.add(socket);
      logger.info({ reason: 'too many pipelined requests waiting', method: req.method }, 'request rejected');
      // No more requests parsed from this connection (their bytes wait in the kernel, then are
      // discarded by the graceful close).
      socket.pause();
      const last = lastQueued.get(socket);
      if (last !== undefined) closeGracefullyAfter(last);
      else socket.destroy();
      return;
    }
    waiting.set(socket, queued);
    lastQueued.set(socket, res);
    res.once('socket', () => {
      waiting.set(socket, (waiting.get(socket) ?? 1) - 1);
      // Refused meanwhile (a body that failed to parse was answered on this response): nothing to serve.
      if (!res.headersSent) listener(req, res);
    });
  };
}

/** Pipelined requests one connection may have waiting for their turn (browsers do not pipeline at all). */
export const MAX_PIPELINED_WAITING = 32;

const waiting = new WeakMap<Duplex, number>();
/** The response of the request queued last on each connection: the last answered, should the queue overflow. */
const lastQueued = new WeakMap<Duplex, ServerResponse>();
/** Connections whose queue overflowed: nothing more is served on them. */
const overflowed = new WeakSet<Duplex>();

/**
 * The response to the last request node handed over on each connection, while that request's body
 * may still be arriving: a parse error on the connection is that body's (client-errors.ts).
 */
const latestResponse = new WeakMap<Duplex, ServerResponse>();

/** For the server's request events, ahead of every other listener: which request each connection is on. */
function requestSeen(req: IncomingMessage, res: ServerResponse): void {
  latestResponse.set(req.socket, res);
  res.once('finish', forgetWhenComplete);
}

/**
 * Once a response is out and its request was received in full, no parse error can concern it:
 * its entry goes. Kept until the next request on a kept-alive connection, it held the whole
 * request (response, request, the exchange with the app) through every minor collection in
 * between (V8's scavenger treats a WeakMap's values as strong), and each request's objects were
 * promoted to the old generation: pauses that set the proxy's p99 (BENCHMARKS.md).
 */
function forgetWhenComplete(this: ServerResponse): void {
  const socket = this.req.socket;
  if (this.req.complete && latestResponse.get(socket) === this) latestResponse.delete(socket);
}

export function serveRequests(
  server: Server,
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  logger: Logger,
): void {
  startServing(server);
  const served = inTurn(listener, logger);
  server.on('request', requestSeen);
  server.on('request', served);
  const continued = inTurn(deferContinue(listener), logger);
  server.on('checkContinue', (req, res) => {
    requestSeen(req, res);
    continued(req, res);
  });
  server.on('connect', refuseConnect(logger));
  server.on(
    'clientError',
    answerClientError(logger, (socket) => latestResponse.get(socket)),
  );
}
