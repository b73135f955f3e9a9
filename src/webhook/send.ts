import type { IncomingMessage, ServerResponse } from 'node:http';

import { closeGracefullyAfter } from '../lingering-close.js';
import type { WebhookResponse } from './response.js';

/**
 * After answering without reading the whole body, close the connection gracefully (lingering-close.ts):
 * what the client still sends is read and discarded, for a bounded time and amount, so the client
 * reads the answer instead of a reset.
 */
export function closeAfterResponse(_req: IncomingMessage, res: ServerResponse): void {
  closeGracefullyAfter(res);
}

/** Runs the response's after-send work once the bytes have left. */
export function runAfterResponse(res: ServerResponse, response: WebhookResponse): void {
  if (response.afterResponse) res.once('finish', response.afterResponse);
}
