// A keep-alive connection to the app can be closed by the app (its idle timeout) at the very
// moment gatehouse sends the next request on it: the two cross, and the request fails before
// any answer. Nothing is wrong with the app, so a 502 would be a false alarm. Like browsers,
// Go's HTTP transport and nginx, the sidecar sends such a request once more, on another
// connection, but only when that is safe: a method without side effects and without a body
// (the app may have received the first copy), no answer started, and only once (a second
// failure is the app's own). A timeout is never tried again.

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How a connection the app closed shows on the request sent over it (undici's code, or the socket's). */
const CONNECTION_LOST = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** Whether a request of `method`, without a body and not yet answered, may be sent once more after `error`. */
export function mayTryAgain(method: string, error: NodeJS.ErrnoException): boolean {
  return SAFE_METHODS.has(method) && error.code !== undefined && CONNECTION_LOST.has(error.code);
}
