// The header policy (docs/architecture.md#the-header-policy): every edit the app's copy of a
// forwarded request gets, decided once, here, for every host. The sidecar and the in-server module
// only apply it, so an app sees the same headers whichever way gatehouse is deployed
// (test/inserver/conformance.test.ts).
//
// - Removed: every inbound identity alias (the shared core's normalization, docs/headers.md), the
//   forwarding headers a client could spoof (below), and the client's own X-Forwarded-For, -Proto
//   and -Host, which gatehouse sets itself.
// - Set: the identity headers (the same array for every request of an identity), with the signed
//   identity assertion when it is on (assertion/signer.ts), then X-Forwarded-For (behind a
//   trusted proxy, its chain extended), -Proto and -Host, from the origin the core judged the
//   request by.
// - Names are compared as the C++ core compares them (binding/core/header_names.cpp): ASCII
//   letters upper-cased, `_` and `.` read as `-`, so that the spellings CGI-style servers merge
//   (`X_Platform_Client_Principal`, `x.platform.client.principal`) are one name.
//
// What belongs to one hop of HTTP/1.1 (Connection and the fields it names, Keep-Alive,
// Transfer-Encoding, the body's framing) is not in here: that is the sidecar's transport, and a
// web server's module never touches it.
import type { AssertionHeader } from '../assertion/signer.js';
import { DEFAULT_HEADER_PREFIX, type Identity, type NormalizedHeaders, type NormalizeOptions } from '../identity.js';
import type { Origin } from './request-view.js';

// ---- Header names as the shared core compares them

/** One UTF-16 unit of a canonical header name. */
function canonicalCharCode(c: number): number {
  if (c >= 0x61 && c <= 0x7a) return c - 0x20;
  return c === 0x5f || c === 0x2e ? 0x2d : c;
}

/** Upper-cases ASCII letters and reads `_` and `.` as `-`, as the C++ core does. */
export function canonicalHeaderName(name: string): string {
  let canonical = '';
  for (let i = 0; i < name.length; i++) canonical += String.fromCharCode(canonicalCharCode(name.charCodeAt(i)));
  return canonical;
}

/**
 * App Service's own identity header prefix: stripped always, whatever prefix is configured (an
 * app written for App Service trusts those names), as the C++ core does.
 */
export const APP_SERVICE_PREFIX = 'X-MS-';

/** Whether a canonical name is an identity header under `prefix` (a principal or a token header). */
export function namesIdentityUnder(canonical: string, prefix: string): boolean {
  return canonical.startsWith(`${prefix}CLIENT-PRINCIPAL`) || canonical.startsWith(`${prefix}TOKEN-`);
}

/** canonicalHeaderName(name).startsWith(canonicalPrefix), without building a string per name. */
export function hasCanonicalPrefix(name: string, canonicalPrefix: string): boolean {
  if (name.length < canonicalPrefix.length) return false;
  for (let i = 0; i < canonicalPrefix.length; i++)
    if (canonicalCharCode(name.charCodeAt(i)) !== canonicalPrefix.charCodeAt(i)) return false;
  return true;
}

// ---- Forwarding headers a client could spoof
//
// Request headers a client could use to make the app believe something gatehouse did not
// check: where the request came from, which origin or port it was sent to, or which path it is
// for. An app trusts gatehouse as its proxy, so whatever gatehouse passes on, it believes.
//
// - Path overrides (`X-Original-URL`, `X-Rewrite-URL`) are dropped always: frameworks that
//   honour them (Zend/Laminas, older Symfony, IIS URL Rewrite setups) route to that path instead,
//   so a request to an excluded path could reach a protected one that gatehouse never judged.
//   Method overrides (`X-HTTP-Method-Override`, `X-HTTP-Method`, `X-Method-Override`) likewise.
// - Spellings of the X-Forwarded-* headers gatehouse sets, with `_` or `.` for `-`, are dropped
//   always: CGI-style servers (WSGI, PHP) merge `X_Forwarded_Host` into the same variable as
//   `X-Forwarded-Host`, so the client's value could override gatehouse's.
// - With no trusted proxy in front (`forwardProxy.convention` NoProxy), gatehouse is the edge:
//   every other forwarding header (any `X-Forwarded-*`, such as `-Port` and `-Prefix`,
//   `Forwarded`, `X-Real-IP`, `True-Client-IP`, `X-Client-IP`, `X-Host`, `Front-End-Https`, …)
//   can only be the client's own claim, and is dropped. Behind a
//   trusted proxy they are that proxy's to set, and pass.

/**
 * The forwarding headers gatehouse sets itself (lower case): the client's own are always replaced
 * (forwardEdits), and their other spellings always dropped (isSpoofedForwarding).
 */
export const FORWARDING_HEADERS_SET_BY_GATEHOUSE: ReadonlySet<string> = new Set([
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
]);

// The sets below hold canonical names (canonicalHeaderName), as the shared core reads identity
// header aliases.
/**
 * Overrides of what gatehouse judged: the path (`X-Original-URL`, `X-Rewrite-URL`) and the method
 * (`X-HTTP-Method-Override` and its kin, which Rails, Laravel, ASP.NET and Express honour: an
 * anonymous CORS preflight the app would run as a DELETE).
 */
const OVERRIDES = new Set([
  'X-ORIGINAL-URL',
  'X-REWRITE-URL',
  'X-HTTP-METHOD-OVERRIDE',
  'X-HTTP-METHOD',
  'X-METHOD-OVERRIDE',
]);
/** Claims of where a request came from or was sent to, beside the X-Forwarded-* family, that servers and frameworks read. */
const CLIENT_CLAIMS = new Set([
  'FORWARDED',
  'X-FORWARDED',
  'X-REAL-IP',
  'TRUE-CLIENT-IP',
  'X-CLIENT-IP',
  'X-CLUSTER-CLIENT-IP',
  'X-PROXYUSER-IP',
  'X-HOST',
  'X-ORIGINAL-HOST',
  'X-URL-SCHEME',
  'FRONT-END-HTTPS',
]);

/**
 * Whether a client's request header (its lower-case name, as node gives it) is left out of
 * what the app receives. The three X-Forwarded-* headers gatehouse sets, in their own spelling,
 * are not: forwardEdits replaces or extends them itself.
 */
export function isSpoofedForwarding(name: string, behindTrustedProxy: boolean): boolean {
  if (!mayConcernForwarding(name)) return false;
  const canonical = canonicalHeaderName(name);
  if (OVERRIDES.has(canonical)) return true;
  const lower = canonical.toLowerCase();
  if (FORWARDING_HEADERS_SET_BY_GATEHOUSE.has(lower)) return name !== lower;
  if (behindTrustedProxy) return false;
  return canonical.startsWith('X-FORWARDED-') || CLIENT_CLAIMS.has(canonical);
}

/** Every name concerned starts with `x`, `f` or `t` (in any case): the other headers are answered at once. */
export function mayConcernForwarding(name: string): boolean {
  const first = name.charCodeAt(0) | 0x20;
  return first === 0x78 || first === 0x66 || first === 0x74;
}

// ---- The identity headers and the inbound aliases
//
// normalize(inbound, identity) has two independent halves: the inbound aliases to remove depend
// on the request, the identity headers to set only on the identity. A session's identity object is
// the same on each of its requests, so its headers are built once; and the alias half needs the
// core only when some inbound header could be an alias at all.

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

const NOTHING: readonly string[] = Object.freeze([]);

/** The inbound header names the core strips (identity aliases, values that could split a header), as the core spells them. */
export function inboundAliases(
  core: HeaderNormalizer,
  rawPairs: ReadonlyArray<readonly [string, string]>,
  options: NormalizeOptions,
): readonly string[] {
  if (!mayCarryIdentityAliases(rawPairs, options.prefix ?? DEFAULT_HEADER_PREFIX)) return NOTHING;
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

// ---- The edits of one forwarded request

export interface ForwardedValues {
  readonly for: string;
  readonly proto: string;
  readonly host: string;
}

export interface ForwardEdits {
  /** Inbound headers the app must not receive: lower-case names, each once; every header of each name goes. */
  readonly remove: readonly string[];
  /** The identity headers (canonical names, byte-string values), set after the removals. Shared: never changed. */
  readonly set: ReadonlyArray<readonly [string, string]>;
  /** X-Forwarded-For, -Proto and -Host as the app receives them. */
  readonly forwarded: ForwardedValues;
}

export interface HeaderPolicy {
  readonly normalizer: HeaderNormalizer;
  readonly options: NormalizeOptions;
  /** A proxy gatehouse trusts is in front (forwardProxy): its forwarding headers pass, its X-Forwarded-For chain is kept. */
  readonly behindTrustedProxy: boolean;
}

const NO_IDENTITY: ReadonlyArray<readonly [string, string]> = Object.freeze([]);

/** The identity headers with an assertion, per assertion header: the same array for each request it rides on. */
const asserted = new WeakMap<
  AssertionHeader,
  { readonly base: object; readonly set: ReadonlyArray<readonly [string, string]> }
>();

function withAssertion(
  base: ReadonlyArray<readonly [string, string]>,
  assertion: AssertionHeader,
): ReadonlyArray<readonly [string, string]> {
  const known = asserted.get(assertion);
  if (known?.base === base) return known.set;
  const set = Object.freeze([...base, assertion]);
  asserted.set(assertion, { base, set });
  return set;
}

/**
 * The edits for a request the core forwards with `identity` (null: anonymous), judged by `origin`;
 * `assertion`, the identity's signed assertion header when assertions are on. Each part is worked
 * out when a host first reads it: the verify endpoint reads the identity headers alone, and the
 * removals and X-Forwarded-* (a pass over the request's headers) would be work thrown away.
 */
export function forwardEdits(
  policy: HeaderPolicy,
  headers: ReadonlyArray<readonly [string, string]>,
  identity: Identity | null,
  origin: Origin,
  remoteAddress: string,
  assertion?: AssertionHeader,
): ForwardEdits {
  return new Edits(policy, headers, identity, origin, remoteAddress, assertion);
}

/** ForwardEdits read on demand, each part once. */
class Edits implements ForwardEdits {
  readonly #policy: HeaderPolicy;
  readonly #headers: ReadonlyArray<readonly [string, string]>;
  readonly #identity: Identity | null;
  readonly #origin: Origin;
  readonly #remoteAddress: string;
  readonly #assertion: AssertionHeader | undefined;
  #remove: readonly string[] | undefined;
  #forwarded: ForwardedValues | undefined;
  #set: ReadonlyArray<readonly [string, string]> | undefined;

  constructor(
    policy: HeaderPolicy,
    headers: ReadonlyArray<readonly [string, string]>,
    identity: Identity | null,
    origin: Origin,
    remoteAddress: string,
    assertion: AssertionHeader | undefined,
  ) {
    this.#policy = policy;
    this.#headers = headers;
    this.#identity = identity;
    this.#origin = origin;
    this.#remoteAddress = remoteAddress;
    this.#assertion = assertion;
  }

  get remove(): readonly string[] {
    if (this.#remove === undefined) this.#readHeaders();
    return this.#remove!;
  }

  get forwarded(): ForwardedValues {
    if (this.#forwarded === undefined) this.#readHeaders();
    return this.#forwarded!;
  }

  // The identity's headers are built (once per identity: identityHeaderPairs keeps them) when a
  // host applies the edits, not while the request is decided: a request whose client is gone by
  // then costs nothing more, and decide() measures the decision alone.
  get set(): ReadonlyArray<readonly [string, string]> {
    if (this.#set !== undefined) return this.#set;
    if (this.#identity === null) return (this.#set = NO_IDENTITY);
    const pairs = identityHeaderPairs(this.#policy.normalizer, this.#identity, this.#policy.options);
    return (this.#set = this.#assertion === undefined ? pairs : withAssertion(pairs, this.#assertion));
  }

  /** The removals and X-Forwarded-For's chain, in one pass over the request's headers. */
  #readHeaders(): void {
    const policy = this.#policy;
    let remove: string[] | undefined;
    let chain: string | undefined;
    for (const [name, value] of this.#headers) {
      if (!mayConcernForwarding(name)) continue;
      const lower = name.toLowerCase();
      if (lower === 'x-forwarded-for' && policy.behindTrustedProxy)
        chain = chain === undefined ? value : `${chain}, ${value}`;
      if (
        (FORWARDING_HEADERS_SET_BY_GATEHOUSE.has(lower) || isSpoofedForwarding(lower, policy.behindTrustedProxy)) &&
        !(remove ??= []).includes(lower)
      )
        remove.push(lower);
    }
    for (const alias of inboundAliases(policy.normalizer, this.#headers, policy.options)) {
      const lower = alias.toLowerCase();
      if (!(remove ??= []).includes(lower)) remove.push(lower);
    }
    this.#remove = remove ?? NOTHING;
    this.#forwarded = {
      for: chain ? `${chain}, ${this.#remoteAddress}` : this.#remoteAddress,
      proto: this.#origin.scheme,
      host: this.#origin.host,
    };
  }
}
