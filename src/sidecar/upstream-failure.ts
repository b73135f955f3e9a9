// A request the app did not answer: what the client gets, and whether the app is asked again.
//
// A keep-alive connection to the app can be closed by the app (its idle timeout) at the very
// moment gatehouse sends the next request on it: the two cross, and the request fails before
// any answer. Nothing is wrong with the app, so a 502 would be a false alarm. Like browsers,
// Go's HTTP transport and nginx, the sidecar sends such a request once more, on another
// connection, but only when that is safe: a method without side effects and without a body
// (the app may have received the first copy), no answer started, and only once (a second
// failure is the app's own). A timeout is never tried again. Any other failure is answered 504
// (the app's timeout) or 502, logged without flooding (failure-summary.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

import type { Logger } from '../logging.js';
import { sendGatewayError } from './answers.js';
import { FailureSummary } from './failure-summary.js';
import { loggedPath } from './logged-path.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How a connection the app closed shows on the request sent over it (undici's code, or the socket's). */
const CONNECTION_LOST = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
const UPSTREAM_TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Whether a request of `method`, without a body and not yet answered, may be sent once more after `error`. */
function mayTryAgain(method: string, error: NodeJS.ErrnoException): boolean {
  return SAFE_METHODS.has(method) && error.code !== undefined && CONNECTION_LOST.has(error.code);
}

export interface UpstreamFailureOptions {
  readonly logger: Logger;
  /** Whether the caller wants JSON (else an error page). */
  readonly wantsJson: (req: IncomingMessage) => boolean;
  /** Told of each request the app did not answer (metrics). */
  readonly onUpstreamFailure?: (kind: 'timeout' | 'error' | 'full') => void;
}

export class UpstreamFailures {
  readonly #summary: FailureSummary;

  constructor(private readonly options: UpstreamFailureOptions) {
    this.#summary = new FailureSummary(options.logger);
  }

  /**
   * An attempt at `req` failed with `error`: sent once more (`again`) when that is safe, else
   * answered on `res` with 504 or 502; an answer the app broke off under way cuts the client's
   * connection. `body` is the request's body stream, null without one.
   */
  failed(
    error: NodeJS.ErrnoException,
    req: IncomingMessage,
    res: ServerResponse,
    body: Readable | null,
    retried: boolean,
    again: (retried: boolean) => void,
  ): void {
    if (res.destroyed) return; // the client is gone: nobody to answer
    const { logger } = this.options;
    const path = loggedPath(req);
    if (!retried && !res.headersSent && body === null && mayTryAgain(req.method ?? '', error)) {
      logger.debug(
        { path, reason: error.code },
        'upstream connection closed by the app as it was reused; sending the request again',
      );
      again(true);
      return;
    }
    const timedOut = error.code !== undefined && UPSTREAM_TIMEOUTS.has(error.code);
    this.options.onUpstreamFailure?.(timedOut ? 'timeout' : 'error');
    if (res.headersSent) {
      logger.error({ path, reason: 'the app broke off its answer' }, 'upstream request failed');
      res.destroy();
      return;
    }
    const reason = timedOut ? 'upstream timeout' : (error.code ?? error.message);
    // While the app is down every request fails alike: the first is logged, the rest counted.
    this.#summary.error(reason, { path, reason }, 'upstream request failed');
    sendGatewayError(res, timedOut ? 504 : 502, this.options.wantsJson(req));
  }
}
