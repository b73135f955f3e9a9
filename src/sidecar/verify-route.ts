// The verify endpoint on node:http: the core's forward-auth answer (core/forward-auth/verify.ts)
// written as the response. Served before Koa, as webhook deliveries are: a web server asks on
// every request it proxies, and the answer needs no more than the request's headers (no body is
// read, nothing but the decision runs).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

import type { ForwardAuth } from '../core/forward-auth/verify.js';
import type { RespondDecision } from '../core/http/request-view.js';
import type { Logger } from '../logging.js';
import { sendGatewayError, writeAnswer } from './answers.js';
import { toRequestView } from './request-view.js';

/** Serves a request when it is for the verify endpoint; true when it was. */
export type VerifyRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Whether a request is for the verify endpoint (its path, the query left out). */
export function isVerifyRequest(forwardAuth: ForwardAuth, req: IncomingMessage): boolean {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return forwardAuth.isVerifyPath(q === -1 ? url : url.slice(0, q));
}

export function verifyRoute(forwardAuth: ForwardAuth, logger: Logger): VerifyRoute {
  return (req, res) => {
    if (!isVerifyRequest(forwardAuth, req)) return false;
    // The scheme of the hop from the web server; the original's comes from X-Forwarded-Proto.
    forwardAuth.answer(toRequestView(req, 'http')).then(
      (answer) => write(res, answer),
      (error: unknown) => {
        logger.error({ err: (error as Error).message }, 'verify failed');
        sendGatewayError(res, 500, true);
      },
    );
    return true;
  };
}

/** The node headers of each bodiless answer (the core keeps one allowed answer per identity), Content-Length included. */
const bodiless = new WeakMap<RespondDecision, OutgoingHttpHeaders>();

/**
 * An answer without a body, the common one (allowed), written as one header block and nothing
 * else; any other as every answer is (writeAnswer).
 */
function write(res: ServerResponse, answer: RespondDecision): void {
  if ((answer.body !== undefined && answer.body.length > 0) || !res.req.complete || res.headersSent || res.destroyed)
    return writeAnswer(res, answer);
  let headers = bodiless.get(answer);
  if (headers === undefined) {
    headers = { ...answer.headers, 'Content-Length': '0' } as OutgoingHttpHeaders;
    bodiless.set(answer, headers);
  }
  res.writeHead(answer.status, headers).end();
}
