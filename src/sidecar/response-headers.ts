// The app's answer as the client receives it: the app's connection-specific
// headers stay on the app's hop. Without this, http-proxy would pass on the
// app's `Connection`/`Keep-Alive` (the app's idle timeout) and whatever private
// field the app's `Connection` header names.
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
  const named = namedByConnection(source.connection ?? '');
  const hint = source['keep-alive'];
  // A fresh object rather than deletes (a deleted key turns node's object into a slow dictionary for http-proxy's copy).
  const kept: IncomingHttpHeaders = hint === undefined ? {} : Object.create(hintCarrier(hint));
  for (const name in source) {
    if (HOP_BY_HOP.has(name) || (named.length > 0 && named.includes(name))) continue;
    kept[name] = source[name];
  }
  kept.connection = res.shouldKeepAlive ? 'keep-alive' : 'close';
  proxyRes.headers = kept;
}

/**
 * Node's agent reads the app's idle-timeout hint (`Keep-Alive: timeout=N`) from these headers when
 * the connection goes back to the pool, and closes it a second before the app would. So the hint
 * stays readable there, inherited from a prototype and not enumerable, which http-proxy's copy
 * onto the client's response (own enumerable keys) leaves out. One prototype per distinct hint:
 * an app announces one or two; past a handful, each answer gets its own.
 */
function hintCarrier(hint: string | string[]): object {
  const key = String(hint);
  let carrier = carriers.get(key);
  if (carrier === undefined) {
    carrier = Object.defineProperty({}, 'keep-alive', { value: hint, enumerable: false });
    if (carriers.size < MAX_CARRIERS) carriers.set(key, carrier);
  }
  return carrier;
}

const carriers = new Map<string, object>();
const MAX_CARRIERS = 8;
