import type { Middleware } from 'koa';

import type { WebhookReceiver } from './receiver.js';
import { closeAfterResponse, runAfterResponse } from './send.js';

/**
 * Koa middleware serving the receiver's path. Mount it before any body
 * parser: it reads the raw bytes itself, and verification needs them untouched.
 */
export function createKoaMiddleware(receiver: WebhookReceiver): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== receiver.config.path) return next();
    const response = await receiver.handle({
      method: ctx.method,
      headers: ctx.req.headers,
      body: ctx.req,
      url: ctx.req.url ?? '',
      rawHeaders: ctx.req.rawHeaders,
      remoteAddress: ctx.req.socket.remoteAddress ?? '',
    });
    runAfterResponse(ctx.res, response);
    // Answered already: gatehouse refused the body while the receiver was reading it.
    if (ctx.res.headersSent || ctx.res.destroyed) {
      ctx.respond = false;
      return;
    }
    if (response.closeConnection) closeAfterResponse(ctx.req, ctx.res);
    ctx.status = response.status;
    ctx.set(response.headers);
    ctx.body = response.body;
  };
}
