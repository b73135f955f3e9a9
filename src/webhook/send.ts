import type { IncomingMessage, ServerResponse } from 'node:http';

import type { WebhookResponse } from './response.js';

/** How long an unread request body may keep draining after a 408/413 before the socket is cut. */
const LINGER_MS = 2000;

/**
 * After answering without reading the whole body, close the connection
 * gracefully: Node discards (never buffers) what the client still sends, for
 * a bounded time, so the client can read the answer before the socket goes.
 */
export function closeAfterResponse(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    req.resume();
    setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
  });
}

/** Runs the response's after-send work once the bytes have left. */
export function runAfterResponse(res: ServerResponse, response: WebhookResponse): void {
  if (response.afterResponse) res.once('finish', response.afterResponse);
}
