// The app's answer as the client receives it: the app's connection-specific
// headers stay on the app's hop. Without this, http-proxy would pass on the
// app's `Connection`/`Keep-Alive` (the app's idle timeout, not gatehouse's) and
// whatever private field the app's `Connection` header names.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

import { HOP_BY_HOP, namedByConnection } from './hop-by-hop.js';

/**
 * For http-proxy's `proxyRes` event, which fires before http-proxy copies the app's headers onto
 * the client's response. The framing (`Transfer-Encoding`) is node's to choose for the client's
 * hop. http-proxy then insists on a `Connection` header of its own, and would say keep-alive even
 * to a client that asked to close: it is set here to what node itself would say to this client.
 */
export function keepHopByHopOnTheAppsHop(proxyRes: IncomingMessage, _req: IncomingMessage, res: ServerResponse): void {
  const source = proxyRes.headers;
  const named = source.connection !== undefined ? namedByConnection(source.connection) : [];
  // A fresh object rather than deletes (a deleted key turns node's object into a slow dictionary for http-proxy's copy).
  const kept: IncomingHttpHeaders = {};
  for (const name of Object.keys(source)) {
    if (HOP_BY_HOP.has(name) || (named.length > 0 && named.includes(name))) continue;
    kept[name] = source[name];
  }
  kept.connection = res.shouldKeepAlive ? 'keep-alive' : 'close';
  // Node's agent reads the app's idle-timeout hint from these headers when the connection goes back
  // to the pool (and closes it a second before the app would): it stays readable there, but not
  // enumerable, so http-proxy's copy onto the client's response leaves it out.
  if (source['keep-alive'] !== undefined) Object.defineProperty(kept, 'keep-alive', { value: source['keep-alive'], enumerable: false });
  proxyRes.headers = kept;
}
