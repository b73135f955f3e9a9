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
    if (response.closeConnection) closeAfterResponse(ctx.req, ctx.res);
    runAfterResponse(ctx.res, response);
    ctx.status = response.status;
    ctx.set(response.headers);
    ctx.body = response.body;
  };
}
