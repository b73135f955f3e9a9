// The server events every gatehouse server answers, whatever it serves: requests (those that
// expect a 100 Continue included), CONNECT, and requests node's parser refuses. One place, so
// that the sidecar and the webhook-only server cannot drift apart when node adds another way
// for a request to arrive outside 'request'.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import type { Logger } from '../logging.js';
import { answerClientError, requestSeen } from './client-errors.js';
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
function inTurn(listener: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // The connection is closing (its last answer is out, and the writing side ended): a request
    // that node still parsed from bytes that came with that answer's request is never served.
    if (req.socket.writableEnded) return;
    if (res.socket !== null) {
      listener(req, res);
      return;
    }
    res.once('socket', () => {
      // Refused meanwhile (a body that failed to parse was answered on this response): nothing to serve.
      if (!res.headersSent) listener(req, res);
    });
  };
}

export function serveRequests(server: Server, listener: (req: IncomingMessage, res: ServerResponse) => void, logger: Logger): void {
  startServing(server);
  const served = inTurn(listener);
  server.on('request', requestSeen);
  server.on('request', served);
  const continued = inTurn(deferContinue(listener));
  server.on('checkContinue', (req, res) => {
    requestSeen(req, res);
    continued(req, res);
  });
  server.on('connect', refuseConnect(logger));
  server.on('clientError', answerClientError(logger));
}
