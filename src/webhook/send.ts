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

/**
 * Runs the response's after-send work once the bytes have left, or once the connection is gone
 * first: a delivery that was processed (and whose id is remembered, so a retry is a duplicate)
 * must reach its subscribers even when its answer could not be delivered.
 */
export function runAfterResponse(res: ServerResponse, response: WebhookResponse): void {
  const after = response.afterResponse;
  if (after === undefined) return;
  let ran = false;
  const once = (): void => {
    if (ran) return;
    ran = true;
    after();
  };
  res.once('finish', once);
  res.once('close', once);
}
