// The answers the sidecar gives itself when it cannot give the app's: built by
// the core's own page and JSON builders (a page for browsers, `{"error"}` for
// APIs, never a stack trace), and written to a node response or a raw socket.
import http, { type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import type { RespondDecision } from '../core/http/request-view.js';
import { closeGracefullyAfter } from '../lingering-close.js';
import { jsonDecision, pageDecision } from '../core/http/responses.js';

/**
 * 408: the client stopped sending a body on its way to the app; 500: gatehouse itself failed (say, its token store); 502: the app is unreachable or broke;
 * 503: too many requests are waiting for the app already; 504: the app was too slow.
 */
export type GatewayErrorStatus = 408 | 500 | 502 | 503 | 504;

const PAGES: Record<GatewayErrorStatus, { readonly title: string; readonly message: string }> = {
  408: { title: 'Request Timeout', message: 'The request body stopped arriving.' },
  500: { title: 'Internal Server Error', message: 'Sign-in could not be checked because of an error on the server.' },
  502: { title: 'Bad Gateway', message: 'The application is not reachable right now.' },
  503: { title: 'Service Unavailable', message: 'The application is busy with too many requests right now.' },
  504: { title: 'Gateway Timeout', message: 'The application did not answer in time.' },
};

export function gatewayError(status: GatewayErrorStatus, wantsJson: boolean): RespondDecision {
  const { title, message } = PAGES[status];
  return wantsJson
    ? jsonDecision(status, { error: message })
    : pageDecision(status, `${status} ${title}`, `${message} Please try again in a moment.`);
}

/** How soon a client turned away for a full bound should try again (s). */
export const RETRY_AFTER_FULL_SECONDS = 1;

/** The 503 for a full bound (the connections to the app and their queue, the WebSocket connections): come back in a second. */
export function fullAnswer(wantsJson: boolean): RespondDecision {
  const full = gatewayError(503, wantsJson);
  return { ...full, headers: { ...full.headers, 'Retry-After': String(RETRY_AFTER_FULL_SECONDS) } };
}

/** A decision that answers the request itself, written as the response (headers as given, the length counted). */
export function writeAnswer(res: ServerResponse, answer: RespondDecision): void {
  // Already answered: gatehouse refused the request's body while it was being read (client-errors.ts).
  if (res.headersSent || res.destroyed) return;
  // Answered before its body has arrived (a challenge, a refusal, a 504 for a stalled upload): the
  // connection closes behind the answer, gracefully, rather than reading on a body nobody wants.
  if (!res.req.complete) closeGracefullyAfter(res);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(answer.headers))
    headers[name] = typeof value === 'string' ? value : [...value];
  const body = answer.body ?? Buffer.alloc(0);
  res.writeHead(answer.status, { ...headers, 'Content-Length': String(body.length) });
  res.end(body);
}

/** Writes the error, or, once the app's answer has begun, cuts the connection (a half answer must not look whole). */
export function sendGatewayError(res: ServerResponse, status: GatewayErrorStatus, wantsJson: boolean): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeAnswer(res, gatewayError(status, wantsJson));
}

/**
 * Answers an upgrade request that is not proxied with a plain HTTP response, then closes the socket.
 * An answer to a HEAD request says how long its body would be, and leaves it out (RFC 9110 §9.3.2).
 */
export function endUpgrade(socket: Duplex, answer: RespondDecision, head = false): void {
  const body = answer.body ?? Buffer.alloc(0);
  const lines = [`HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status] ?? ''}`];
  for (const [name, value] of Object.entries(answer.headers))
    for (const v of typeof value === 'string' ? [value] : value) lines.push(`${name}: ${v}`);
  lines.push(`Content-Length: ${body.length}`, 'Connection: close');
  const headers = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
  socket.end(head ? headers : Buffer.concat([headers, body]));
}
