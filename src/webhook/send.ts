import type { IncomingMessage, ServerResponse } from 'node:http';

import { lingerWhenNodeCloses } from '../lingering-close.js';
import type { WebhookResponse } from './response.js';

/**
 * After answering without reading the whole body, close the connection gracefully (lingering-close.ts):
 * what the client still sends is read and discarded, for a bounded time and amount, so the client
 * reads the answer instead of a reset.
 */
export function closeAfterResponse(req: IncomingMessage, res: ServerResponse): void {
  res.shouldKeepAlive = false;
  lingerWhenNodeCloses(req.socket);
}

/** Runs the response's after-send work once the bytes have left. */
export function runAfterResponse(res: ServerResponse, response: WebhookResponse): void {
  if (response.afterResponse) res.once('finish', response.afterResponse);
}
