// A request node's HTTP parser refuses (a malformed request line or header, headers too large,
// headers that never finish arriving) never becomes a request: no listener of gatehouse sees it,
// and node's default answer is a bare status line with no body, logged nowhere. A 'clientError'
// listener gives it the same treatment as every other refusal: a JSON error saying what was
// wrong, the connection closed, and a log line. Nothing of the request is logged: it failed to
// parse, so its path cannot be told apart from its headers (cookies included).
import http from 'node:http';
import type { Duplex } from 'node:stream';

import { jsonDecision } from '../core/http/responses.js';
import { closeGracefullyAfter, lingerWhenNodeCloses, lingeringClose } from '../lingering-close.js';
import type { Logger } from '../logging.js';
import { endUpgrade } from './answers.js';
import { refuseBody } from './body-refusal.js';
import { afterResponses } from './responses-in-progress.js';

interface Refusal {
  readonly status: number;
  readonly reason: string;
  readonly message: string;
}

/** What each parser error is answered with; any other parser error is a malformed request. */
function refusalFor(code: string | undefined): Refusal {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: 'request headers too large',
        message: `The request's headers are too large (over ${http.maxHeaderSize} bytes in all).`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        reason: 'chunk extensions too large',
        message: "The request body's chunk extensions are too large.",
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        reason: 'request headers not received in time',
        message: "The request's headers did not arrive in time.",
      };
    default:
      return { status: 400, reason: 'malformed request', message: 'The request is not valid HTTP/1.1.' };
  }
}

/**
 * Whether the refused request is a HEAD, as far as the bytes node failed on tell (the request
 * line, unless it arrived in an earlier packet): its answer must have no body, or the client
 * reads that body as the start of something else.
 */
function refusesHead(error: NodeJS.ErrnoException & { readonly rawPacket?: unknown }): boolean {
  return Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
}

/**
 * The response to the last request node handed over on a connection, while that request's body may
 * still be arriving (serve-requests.ts keeps track of it): where a parse error of a body is answered.
 */
export type RequestInProgress = (socket: Duplex) => http.ServerResponse | undefined;

/**
 * Sockets with a refusal waiting behind a response still in progress, or already answered: node's
 * parser, left in error, reports every further byte the client sends as another error.
 */
const refused = new WeakSet<Duplex>();

/**
 * A body node's parser refused after the request's headers were accepted (a bad chunk size,
 * chunk extensions too large): the request is already being served, by the forwarder or by
 * gatehouse reading its body (and may be pipelined behind others still being answered). Whoever serves it stops (body-refusal.ts: the app's request is
 * aborted), and the refusal is answered at once on the request's own response, the connection
 * closed gracefully behind it. An answer already under way (the app answered before reading the
 * body) cannot become a refusal: the connection is cut.
 */
function refuseBodyInProgress(res: http.ServerResponse, socket: Duplex, refusal: Refusal): void {
  refuseBody(res.req);
  if (res.writableEnded) {
    // Already answered in full (a challenge before the body had arrived): the connection closes behind it.
    if (res.writableFinished) lingeringClose(socket);
    else res.once('finish', () => lingeringClose(socket));
    return;
  }
  if (res.headersSent) {
    socket.destroy();
    return;
  }
  // A response queued behind a pipelined one is written when its turn comes (closeGracefullyAfter waits for its socket).
  const answer = jsonDecision(refusal.status, { error: refusal.message });
  const body = answer.body ?? Buffer.alloc(0);
  closeGracefullyAfter(res);
  res.writeHead(refusal.status, {
    ...(answer.headers as Record<string, string>),
    'Content-Length': String(body.length),
  });
  res.end(body);
}

/**
 * A server's 'clientError' listener. A connection that failed below HTTP (reset, broken pipe) is
 * only closed: there is nobody to answer. A body that fails to parse is refused at once
 * (refuseBodyInProgress). A request that fails to parse behind pipelined ones still being
 * answered is answered after them, so that no answer is cut or overtaken (node's default writes
 * its 400 at once, ahead of an answer not yet begun, or cuts one under way). Every refusal closes
 * the connection gracefully (lingering-close.ts), so that a client still sending reads it.
 */
export function answerClientError(
  logger: Logger,
  inProgress: RequestInProgress,
): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    if (refused.has(socket)) return; // what a refused client still sends: discarded, the connection closing
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    const refusal = refusalFor(error.code);
    logger.info({ reason: refusal.reason, code: error.code }, 'request rejected');
    // The request node was parsing when it failed: the last one it handed over, if its body is still arriving.
    const parsing = inProgress(socket);
    if (parsing !== undefined && !parsing.req.complete) {
      refused.add(socket);
      refuseBodyInProgress(parsing, socket, refusal);
      return;
    }
    const head = refusesHead(error);
    refused.add(socket);
    // Whoever closes this connection now (node, after an answer that closes it, or the refusal
    // below), it closes gracefully: the client is still sending, and a reset would discard answers.
    lingerWhenNodeCloses(socket);
    afterResponses(socket, () => {
      if (!socket.writable) {
        // Already closing gracefully behind an answer that closed it (lingering-close.ts): leave it
        // to that, or the answer still on its way is cut by a reset.
        if (!socket.writableEnded) socket.destroy();
        return;
      }
      endUpgrade(socket, jsonDecision(refusal.status, { error: refusal.message }), head);
      lingeringClose(socket);
    });
  };
}
