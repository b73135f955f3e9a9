// The header policy (docs/architecture.md#the-header-policy): every edit the app's copy of a forwarded request gets, decided
// once, here, for every host. The sidecar and the in-server module only apply it, so an app sees
// the same headers whichever way gatehouse is deployed (test/inserver/conformance.test.ts).
//
// - Removed: every inbound identity alias (the shared core's normalization, docs/headers.md), the
//   forwarding headers a client could spoof (spoofed-forwarding.ts), and the client's own
//   X-Forwarded-For, -Proto and -Host, which gatehouse sets itself.
// - Set: the identity headers (the same array for every request of an identity), with the signed
//   identity assertion when it is on (assertion/signer.ts), then X-Forwarded-For (behind a
//   trusted proxy, its chain extended), -Proto and -Host, from the origin the core judged the
//   request by.
//
// What belongs to one hop of HTTP/1.1 (Connection and the fields it names, Keep-Alive,
// Transfer-Encoding, the body's framing) is not in here: that is the sidecar's transport, and a
// web server's module never touches it.
import type { AssertionHeader } from '../assertion/signer.js';
import type { Identity, NormalizeOptions } from '../identity.js';
import { identityHeaderPairs, inboundAliases, type HeaderNormalizer } from './identity-headers.js';
import type { Origin } from './origin.js';
import {
  isSpoofedForwarding,
  mayConcernForwarding,
  FORWARDING_HEADERS_SET_BY_GATEHOUSE,
} from './spoofed-forwarding.js';

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

const NOTHING: readonly string[] = Object.freeze([]);
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
