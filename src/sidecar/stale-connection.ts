// A keep-alive connection to the app can be closed by the app (its idle timeout)
// at the very moment gatehouse sends the next request on it: the two cross, and the
// request fails with a reset before any answer. Nothing is wrong with the app, so a
// 502 would be a false alarm. Like browsers, Go's HTTP transport and nginx, the
// sidecar sends such a request once more, on a new connection, but only when that
// is safe: a method without side effects and without a body (the app may have
// received the first copy), a connection that had served an earlier request (a
// fresh connection that resets is the app's own failure), and no answer started.
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How a connection the app closed shows on the request sent over it. */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Whether a request may be tried once more: safe, and sent over a reused connection. Kept on
 * the request itself and written on every first attempt, so every forwarded request has the
 * same shape (a WeakSet entry per request cost more than the whole check).
 */
const ELIGIBLE = Symbol('gatehouse.retryEligible');
type Noted = IncomingMessage & { [ELIGIBLE]?: boolean };

export class StaleConnectionRetry {
  /** For http-proxy's `proxyReq` event: notes whether a first attempt went out on a reused connection. */
  readonly noteAttempt = (proxyReq: ClientRequest, req: IncomingMessage): void => {
    (req as Noted)[ELIGIBLE] = proxyReq.reusedSocket && SAFE_METHODS.has(req.method ?? '');
  };

  /**
   * Whether this failure is the crossing described above; true at most once per
   * request (the caller then retries it on a new connection, which is never reused).
   * A timeout also surfaces as a reset: the caller rules it out first.
   */
  shouldRetry(error: NodeJS.ErrnoException, req: IncomingMessage, res: ServerResponse): boolean {
    if ((req as Noted)[ELIGIBLE] !== true) return false;
    (req as Noted)[ELIGIBLE] = false;
    return !res.headersSent && error.code !== undefined && CONNECTION_LOST.has(error.code) && !hasBody(req);
  }
}

/**
 * Whether the client sent a body (a GET may): it was streamed to the first attempt and is
 * gone. Read from the headers as received, since the forwarded ones are rewritten. Checked
 * only on the rare failure path, not for every request.
 */
function hasBody(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name === 'transfer-encoding') return true;
    if (name === 'content-length' && raw[i + 1]!.trim() !== '0') return true;
  }
  return false;
}
