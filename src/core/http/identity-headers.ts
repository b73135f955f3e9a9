// The shared normalization (docs/architecture.md#the-header-policy) as a host applies it on every request.
// normalize(inbound, identity) has two independent halves: the inbound aliases
// to remove depend on the request, the identity headers to set only on the
// identity. A session's identity object is the same on each of its requests,
// so its headers are built once; and the alias half needs the core only when
// some inbound header could be an alias at all. The header policy
// (forward-edits.ts) is built on these, once for both hosts.
import { DEFAULT_HEADER_PREFIX, type Identity, type NormalizedHeaders, type NormalizeOptions } from '../identity.js';
import { APP_SERVICE_PREFIX, canonicalHeaderName, hasCanonicalPrefix } from './header-names.js';

/** The shared core's normalization (the C++ addon, or its TypeScript fallback): what the header policy is built on. */
export interface HeaderNormalizer {
  normalizeHeaders(
    inbound: ReadonlyArray<readonly [string, string]>,
    identity: Identity | null,
    options?: NormalizeOptions,
  ): NormalizedHeaders;
}

/**
 * False only when the core's alias strip would certainly remove nothing: no
 * header name that, upper-cased with `_` and `.` read as `-`, starts with the
 * prefix or with App Service's `X-MS-`, and no value with CR, LF or NUL. Then the native call is skipped; the
 * outcome is the same by construction (the vectors pin the core's rules).
 */
export function mayCarryIdentityAliases(rawPairs: ReadonlyArray<readonly [string, string]>, prefix: string): boolean {
  const canonicalPrefix = canonicalPrefixOf(prefix);
  for (const [name, value] of rawPairs) {
    if (hasCanonicalPrefix(name, canonicalPrefix) || hasCanonicalPrefix(name, APP_SERVICE_PREFIX)) return true;
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

const NOTHING_TO_REMOVE: readonly string[] = Object.freeze([]);

/** The inbound header names the core strips (identity aliases, values that could split a header), as the core spells them. */
export function inboundAliases(
  core: HeaderNormalizer,
  rawPairs: ReadonlyArray<readonly [string, string]>,
  options: NormalizeOptions,
): readonly string[] {
  if (!mayCarryIdentityAliases(rawPairs, options.prefix ?? DEFAULT_HEADER_PREFIX)) return NOTHING_TO_REMOVE;
  return core.normalizeHeaders(rawPairs, null, options).remove;
}

interface BuiltHeaders {
  readonly prefix: string | undefined;
  readonly exposeTokens: boolean | undefined;
  readonly set: ReadonlyArray<readonly [string, string]>;
}

const built = new WeakMap<Identity, BuiltHeaders>();

/**
 * The identity headers the core sets for `identity` (its canonical names, byte-string
 * values), built once per identity object and options, and frozen (they are shared).
 * Throws HeaderValueError, every time, for an identity whose values could split a header.
 */
export function identityHeaderPairs(
  core: HeaderNormalizer,
  identity: Identity,
  options: NormalizeOptions,
): ReadonlyArray<readonly [string, string]> {
  const cached = built.get(identity);
  if (cached !== undefined && cached.prefix === options.prefix && cached.exposeTokens === options.exposeTokens)
    return cached.set;
  // Frozen: every request of the identity shares these arrays, so none may change them.
  const set = Object.freeze(core.normalizeHeaders([], identity, options).set.map((pair) => Object.freeze(pair)));
  built.set(identity, { prefix: options.prefix, exposeTokens: options.exposeTokens, set });
  return set;
}
