// The verify endpoint as the front door's Koa middleware (front-door.ts mounts it on its path):
// the core's forward-auth answer (core/forward-auth/verify.ts) written as the response. A web
// server asks on every request it proxies, and the answer needs no more than the request's
// headers: no body is read, nothing but the decision runs, and the common answer is written as
// one header block.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

import type { ForwardAuth } from '../core/forward-auth/verify.js';
import type { RequestView, RespondDecision } from '../core/http/request-view.js';
import type { Logger } from '../logging.js';
import { sendGatewayError, writeAnswer } from './answers.js';
import type { FrontDoorContext } from './front-door.js';

/** The endpoint, given the front door's context and the core's view of the request (front-door.ts). */
export function verifyEndpoint(
  forwardAuth: ForwardAuth,
  logger: Logger,
): (ctx: FrontDoorContext, view: RequestView) => Promise<void> {
  return async (ctx, view) => {
    ctx.respond = false;
    try {
      write(ctx.res, await forwardAuth.answer(view));
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'verify failed');
      sendGatewayError(ctx.res, 500, true);
    }
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
