// CORS preflights (the Fetch standard's "CORS-preflight request"): an OPTIONS request that carries
// `Origin` and `Access-Control-Request-Method`. A browser sends one before a cross-origin request
// that is not "simple" (a JSON POST, an Authorization header), and never with credentials: no
// cookie, no Authorization. On a protected path it is therefore always challenged, and the browser
// then refuses to send the real request, signed in or not. With `gatehouse.forwardCorsPreflights`
// such requests go to the app anonymously, for the app's own CORS policy to answer.
import { headerValue, type RequestView } from './request-view.js';

export function isCorsPreflight(view: Pick<RequestView, 'method' | 'headers'>): boolean {
  // Methods are case-sensitive (RFC 9110 §9.1): browsers send exactly OPTIONS.
  return (
    view.method === 'OPTIONS' &&
    headerValue(view, 'origin') !== undefined &&
    headerValue(view, 'access-control-request-method') !== undefined
  );
}
