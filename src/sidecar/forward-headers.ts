// The headers the app receives: hop-by-hop headers removed, identity
// normalized by the shared core, X-Forwarded-* set by gatehouse, forwarding
// headers a client could spoof left out.
import type { IncomingHttpHeaders } from 'node:http';

import type { Identity, NormalizeOptions } from '../core/identity.js';
import { identityHeaderPairs, inboundAliases } from '../native/identity-headers.js';
import type { GatehouseCore } from '../native/types.js';
import { HOP_BY_HOP, namedByConnection } from './hop-by-hop.js';
import { isSpoofedForwarding } from './spoofed-forwarding.js';

export interface ForwardContext {
  readonly remoteAddress: string;
  readonly scheme: 'http' | 'https';
  readonly host: string;
  /** Behind a trusted proxy: keep the X-Forwarded-For chain and the other forwarding headers it sets (spoofed-forwarding.ts). */
  readonly trustForwardedFor: boolean;
  /** WebSocket handshakes keep Connection/Upgrade. */
  readonly upgrade: boolean;
}

/**
 * Request fields of the client's hop that are not hop-by-hop by name. `Content-Length`: the body's
 * framing toward the app is the forwarder's to write (undici writes the length of what it sends,
 * or chunks it), from the framing node's parser read. `Expect`: gatehouse answers the client's
 * `100-continue` itself when it starts reading the body (expect-continue.ts).
 */
const NOT_PASSED_ON = new Set(['content-length', 'expect']);

const lowerCased = new WeakMap<ReadonlyArray<readonly [string, string]>, ReadonlyArray<readonly [string, string]>>();

/** The identity headers with node's lower-case names, made once per built set (so once per identity). */
function identityHeaders(core: GatehouseCore, identity: Identity, options: NormalizeOptions): ReadonlyArray<readonly [string, string]> {
  const set = identityHeaderPairs(core, identity, options);
  let lower = lowerCased.get(set);
  if (lower === undefined) {
    lower = set.map(([name, value]) => [name.toLowerCase(), value] as const);
    lowerCased.set(set, lower);
  }
  return lower;
}

/**
 * The headers to forward, as a new object (node's lower-cased shape, which
 * http-proxy copies): hop-by-hop headers and every header the `Connection`
 * header names are left out, inbound identity aliases are left out, then
 * gatehouse's own headers are added. A hostile `Connection` header naming
 * identity or X-Forwarded-* headers therefore removes only client headers.
 * (A fresh object, not deletes on node's: deleting turns an object into a
 * slow dictionary for every later copy.)
 */
export function forwardHeaders(
  headers: IncomingHttpHeaders,
  rawPairs: ReadonlyArray<readonly [string, string]>,
  identity: Identity | null,
  core: GatehouseCore,
  normalizeOptions: NormalizeOptions,
  context: ForwardContext,
): IncomingHttpHeaders {
  // Headers the Connection header names, and inbound identity aliases (usually none of either:
  // the set is made only when there is something to drop).
  let dropped: Set<string> | undefined;
  // Browsers send `Connection: keep-alive`: a name dropped anyway needs no set.
  if (headers.connection !== undefined) for (const name of namedByConnection(headers.connection)) (dropped ??= new Set()).add(name);
  // Inbound aliases are stripped on every request by the shared core; the identity headers of
  // a session are the same on every request, so they are built once per identity.
  for (const name of inboundAliases(core, rawPairs, normalizeOptions)) (dropped ??= new Set()).add(name.toLowerCase());

  const out: IncomingHttpHeaders = {};
  for (const name of Object.keys(headers)) {
    const drop = HOP_BY_HOP.has(name) || NOT_PASSED_ON.has(name) || dropped?.has(name) === true || isSpoofedForwarding(name, context.trustForwardedFor);
    // WebSocket handshakes keep Upgrade and Connection.
    if (drop && !(context.upgrade && (name === 'upgrade' || name === 'connection'))) continue;
    out[name] = headers[name];
  }
  if (context.upgrade) out.connection = 'Upgrade';
  if (identity !== null) {
    for (const [name, value] of identityHeaders(core, identity, normalizeOptions)) out[name] = value;
  }
  // A body of known length goes on with that length (undici checks it sends exactly that many bytes).
  const length = headers['content-length'];
  if (length !== undefined && headers['transfer-encoding'] === undefined && !context.upgrade) out['content-length'] = length;
  const previous = context.trustForwardedFor ? headers['x-forwarded-for'] : undefined;
  const chain = Array.isArray(previous) ? previous.join(', ') : previous;
  out['x-forwarded-for'] = chain ? `${chain}, ${context.remoteAddress}` : context.remoteAddress;
  out['x-forwarded-proto'] = context.scheme;
  out['x-forwarded-host'] = context.host;
  return out;
}
