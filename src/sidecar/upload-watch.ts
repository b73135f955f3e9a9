// A request body on its way to the app, timed: undici does not time the app while it still sends
// the body, so the forwarder (forward-to-app.ts) has gatehouse watch the client's upload itself.
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Logger } from '../logging.js';
import { gatewayError, writeAnswer } from './answers.js';
import { loggedPath } from './logged-path.js';

/** The slowest an upload may arrive, on average, once its grace period is over (Kestrel's default minimum request body rate). */
export const MIN_UPLOAD_BYTES_PER_SECOND = 240;
/** How long an upload may arrive at any rate before the minimum applies. */
export const UPLOAD_RATE_GRACE_MS = 5_000;

export interface UploadWatchOptions {
  /** How long the body may stop arriving (the upstream timeout). */
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** Whether the caller wants JSON (else an error page). */
  readonly wantsJson: (req: IncomingMessage) => boolean;
  /** Gives up the app's request. */
  readonly abandon: () => void;
}

/**
 * Times the client's upload, since undici does not time the app while it still sends the body:
 * a body that stops arriving for as long as the app may stay silent, or that arrives slower than
 * MIN_UPLOAD_BYTES_PER_SECOND, on average since UPLOAD_RATE_GRACE_MS or over any stretch as long
 * as the upstream timeout (counting only the time gatehouse was ready to read: not while the app
 * held the upload back), is given up. The app's request is abandoned and the client told 408,
 * the connection closed. Without the rate, a client sending a byte a minute would hold a place
 * among the requests in flight for good.
 */
export function watchUpload(req: IncomingMessage, res: ServerResponse, options: UploadWatchOptions): NodeJS.Timeout {
  const tickMs = Math.min(1_000, Math.max(10, Math.floor(options.timeoutMs / 4)));
  let received = 0;
  let lastData = Date.now();
  let readyMs = 0;
  // The same minimum over the last upstream timeout's worth of ready time, so that an early burst
  // cannot buy a long stretch at almost no rate (the whole upload's average alone would allow it).
  const windowTicks = Math.max(1, Math.ceil(options.timeoutMs / tickMs));
  const recent: number[] = [];
  let inTick = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    if (!req.isPaused()) {
      readyMs += tickMs;
      recent.push(inTick);
      if (recent.length > windowTicks) recent.shift();
    }
    inTick = 0;
    const stalled = now - lastData >= options.timeoutMs;
    const windowBytes = recent.length === windowTicks ? recent.reduce((sum, bytes) => sum + bytes, 0) : Infinity;
    const slow =
      (readyMs >= UPLOAD_RATE_GRACE_MS && (received * 1000) / readyMs < MIN_UPLOAD_BYTES_PER_SECOND) ||
      (windowBytes * 1000) / (windowTicks * tickMs) < MIN_UPLOAD_BYTES_PER_SECOND;
    if (!stalled && !slow) return;
    clearInterval(timer);
    req.off('data', moved);
    options.abandon();
    options.logger.info(
      {
        path: loggedPath(req),
        reason: stalled ? 'the request body stopped arriving' : 'the request body arrives too slowly',
      },
      'request rejected',
    );
    if (res.headersSent) res.destroy();
    else writeAnswer(res, gatewayError(408, options.wantsJson(req)));
  }, tickMs);
  timer.unref();
  const moved = (chunk: Buffer): void => {
    received += chunk.length;
    inTick += chunk.length;
    lastData = Date.now();
  };
  req.on('data', moved);
  req.once('end', () => {
    clearInterval(timer);
    req.off('data', moved);
  });
  return timer;
}
