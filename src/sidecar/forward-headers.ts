// The headers the app receives: hop-by-hop headers removed, identity
// normalized by the shared core, X-Forwarded-* set by gatehouse.
import type { IncomingHttpHeaders } from 'node:http';

import type { Identity, NormalizeOptions } from '../core/identity.js';
import type { GatehouseCore } from '../native/types.js';

/** RFC 9110 §7.6.1 connection-specific fields, plus the legacy ones proxies drop. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);

export interface ForwardContext {
  readonly remoteAddress: string;
  readonly scheme: 'http' | 'https';
  readonly host: string;
  /** Keep a client's X-Forwarded-For chain (only behind a trusted proxy). */
  readonly trustForwardedFor: boolean;
  /** WebSocket handshakes keep Connection/Upgrade. */
  readonly upgrade: boolean;
}

const builtHeaders = new WeakMap<Identity, ReadonlyArray<readonly [string, string]>>();

/** The identity headers (lower-case names, byte-string values) for an identity object, built once. */
function identityHeaders(core: GatehouseCore, identity: Identity, options: NormalizeOptions): ReadonlyArray<readonly [string, string]> {
  let built = builtHeaders.get(identity);
  if (built === undefined) {
    built = core.normalizeHeaders([], identity, options).set.map(([name, value]) => [name.toLowerCase(), value] as const);
    builtHeaders.set(identity, built);
  }
  return built;
}

/**
 * Rewrites `headers` (node's lower-cased object, as the proxy forwards it)
 * and returns the raw pairs to normalize against. A hostile `Connection`
 * header naming identity or X-Forwarded-* headers removes only client
 * headers: it is dropped itself, and what gatehouse sets comes after.
 */
export function prepareForwardHeaders(
  headers: IncomingHttpHeaders,
  rawPairs: ReadonlyArray<readonly [string, string]>,
  identity: Identity | null,
  core: GatehouseCore,
  normalizeOptions: NormalizeOptions,
  context: ForwardContext,
): void {
  const named = (headers.connection ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const keep = context.upgrade ? new Set(['connection', 'upgrade']) : new Set<string>();
  for (const name of [...HOP_BY_HOP, ...named]) if (!keep.has(name)) delete headers[name];
  if (context.upgrade) {
    headers.connection = 'Upgrade';
  }

  // Inbound aliases are stripped on every request; the identity headers of a
  // session are the same on every request, so they are built once per identity.
  for (const name of core.normalizeHeaders(rawPairs, null, normalizeOptions).remove) delete headers[name.toLowerCase()];
  if (identity !== null) {
    for (const [name, value] of identityHeaders(core, identity, normalizeOptions)) headers[name] = value;
  }

  const previous = context.trustForwardedFor ? headers['x-forwarded-for'] : undefined;
  const chain = Array.isArray(previous) ? previous.join(', ') : previous;
  headers['x-forwarded-for'] = chain ? `${chain}, ${context.remoteAddress}` : context.remoteAddress;
  headers['x-forwarded-proto'] = context.scheme;
  headers['x-forwarded-host'] = context.host;
}
