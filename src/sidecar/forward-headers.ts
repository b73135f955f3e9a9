// The headers the app receives: hop-by-hop headers removed, identity
// normalized by the shared core, X-Forwarded-* set by gatehouse.
import type { IncomingHttpHeaders } from 'node:http';

import { DEFAULT_HEADER_PREFIX, type Identity, type NormalizeOptions } from '../core/identity.js';
import { canonicalHeaderName, hasCanonicalPrefix } from '../native/fallback.js';
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

/**
 * False only when the core's alias strip would certainly remove nothing: no
 * header name that, upper-cased with `_` and `.` read as `-`, starts with the
 * prefix, and no value with CR, LF or NUL. Then the native call is skipped; the
 * outcome is the same by construction (the vectors pin the core's rules).
 */
export function mayCarryIdentityAliases(rawPairs: ReadonlyArray<readonly [string, string]>, prefix: string): boolean {
  const canonicalPrefix = canonicalPrefixOf(prefix);
  for (const [name, value] of rawPairs) {
    if (hasCanonicalPrefix(name, canonicalPrefix)) return true;
    if (/[\r\n\0]/.test(value)) return true;
  }
  return false;
}

/** A deployment has one prefix: its canonical form is built once, not on every request. */
let lastPrefix: { readonly prefix: string; readonly canonical: string } | undefined;
function canonicalPrefixOf(prefix: string): string {
  if (lastPrefix?.prefix !== prefix) lastPrefix = { prefix, canonical: canonicalHeaderName(prefix) };
  return lastPrefix.canonical;
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
  if (headers.connection !== undefined) {
    for (const name of headers.connection.split(',')) {
      const trimmed = name.trim().toLowerCase();
      // Browsers send `Connection: keep-alive`: a name dropped anyway needs no set.
      if (trimmed !== '' && !HOP_BY_HOP.has(trimmed)) (dropped ??= new Set()).add(trimmed);
    }
  }
  // Inbound aliases are stripped on every request by the shared core; the identity headers of
  // a session are the same on every request, so they are built once per identity.
  if (mayCarryIdentityAliases(rawPairs, normalizeOptions.prefix ?? DEFAULT_HEADER_PREFIX)) {
    for (const name of core.normalizeHeaders(rawPairs, null, normalizeOptions).remove) (dropped ??= new Set()).add(name.toLowerCase());
  }

  const out: IncomingHttpHeaders = {};
  for (const name of Object.keys(headers)) {
    const drop = HOP_BY_HOP.has(name) || dropped?.has(name) === true;
    // WebSocket handshakes keep Upgrade and Connection.
    if (drop && !(context.upgrade && (name === 'upgrade' || name === 'connection'))) continue;
    out[name] = headers[name];
  }
  if (context.upgrade) out.connection = 'Upgrade';
  if (identity !== null) {
    for (const [name, value] of identityHeaders(core, identity, normalizeOptions)) out[name] = value;
  }
  const previous = context.trustForwardedFor ? headers['x-forwarded-for'] : undefined;
  const chain = Array.isArray(previous) ? previous.join(', ') : previous;
  out['x-forwarded-for'] = chain ? `${chain}, ${context.remoteAddress}` : context.remoteAddress;
  out['x-forwarded-proto'] = context.scheme;
  out['x-forwarded-host'] = context.host;
  return out;
}
