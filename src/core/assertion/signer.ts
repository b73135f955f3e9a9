// The signed identity assertion header (docs/headers.md#signed-identity-assertion): a JWT of
// gatehouse's own keys that the app can check, set on every request forwarded with an identity.
// Signed once per identity and origin, and the same header reused until it is close to expiry, so a
// signed-in request costs a cache lookup, not a signature.
import { SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';

import { canonicalHeaderName } from '../http/header-policy.js';
import type { Origin } from '../http/request-view.js';
import type { Identity } from '../identity.js';
import { assertedIdentity, type JudgedFacts } from './claims.js';
import type { AssertionKeyRing } from './key-ring.js';
import type { IdentityAssertionSettings } from './settings.js';

/** The header's name after the identity prefix. */
export const ASSERTION_HEADER_SUFFIX = 'CLIENT-PRINCIPAL-ASSERTION';

/** How many signed assertions are remembered by what they say (the least recently used forgotten first). */
export const ASSERTION_CACHE_MAX = 10_000;
/** How many origins one identity object's assertions are remembered for (a site has one or a few). */
const ORIGINS_PER_IDENTITY = 8;

export type AssertionHeader = readonly [name: string, value: string];

/** One identity's assertion for one origin. */
interface ForOrigin {
  readonly scheme: string;
  readonly host: string;
  signed: Signed;
}

interface Signed {
  /** Frozen: every request of the identity shares it. */
  readonly header: AssertionHeader;
  /** From then on a new one is signed: a third of the lifetime is left, for the trip and clocks that disagree. */
  readonly renewAt: number;
}

export interface IdentityAssertionsOptions {
  readonly ring: AssertionKeyRing;
  readonly settings: IdentityAssertionSettings;
  /** The identity header prefix (`X-PLATFORM-`). */
  readonly headerPrefix: string;
  readonly now?: () => number;
  readonly cacheMax?: number;
}

export class IdentityAssertions {
  readonly headerName: string;
  readonly #ring: AssertionKeyRing;
  readonly #settings: IdentityAssertionSettings;
  readonly #now: () => number;
  /**
   * By identity object (one per cached session or bearer token), then origin: the lookup of every
   * request, so it compares strings it is given rather than building a key.
   */
  readonly #byIdentity = new WeakMap<Identity, ForOrigin[]>();
  /** By what the assertion says: a session read again from the store is a new identity object, but the same assertion. */
  readonly #byContent: LRUCache<string, Signed>;
  /** The facts authorization judged each identity by, where the layer knows them (assertedIdentity). */
  readonly #access = new WeakMap<Identity, JudgedFacts>();
  /** Signatures under way, by what they say: concurrent requests of one identity wait for one. */
  readonly #signing = new Map<string, Promise<Signed>>();

  constructor(options: IdentityAssertionsOptions) {
    this.headerName = canonicalHeaderName(`${options.headerPrefix}${ASSERTION_HEADER_SUFFIX}`);
    this.#ring = options.ring;
    this.#settings = options.settings;
    this.#now = options.now ?? Date.now;
    this.#byContent = new LRUCache({ max: options.cacheMax ?? ASSERTION_CACHE_MAX });
  }

  /** Tells the facts (groups, roles, verified address) the caller of `identity` was judged by. */
  noteAccess(identity: Identity, access: JudgedFacts | undefined): void {
    if (access !== undefined) this.#access.set(identity, access);
  }

  /** The header for `identity` on a request to `origin`, when one signed before is still fresh. */
  cached(identity: Identity, origin: Origin): AssertionHeader | undefined {
    const known = this.#byIdentity.get(identity);
    if (known === undefined) return undefined;
    const signed = forOrigin(known, origin)?.signed;
    return signed !== undefined && signed.renewAt > this.#now() ? signed.header : undefined;
  }

  /** The header for `identity` on a request to `origin`: the cached one, or one signed now. */
  async header(identity: Identity, origin: Origin): Promise<AssertionHeader> {
    const now = this.#now();
    const known = this.#byIdentity.get(identity);
    const entry = known === undefined ? undefined : forOrigin(known, origin);
    if (entry !== undefined && entry.signed.renewAt > now) return entry.signed.header;
    const signed = await this.#signedFor(identity, `${origin.scheme}://${origin.host}`, now);
    const entries = this.#byIdentity.get(identity) ?? [];
    const current = forOrigin(entries, origin);
    if (current !== undefined) current.signed = signed;
    else {
      // A client may send many host names; one identity keeps a few origins only.
      if (entries.length >= ORIGINS_PER_IDENTITY) entries.length = 0;
      entries.push({ scheme: origin.scheme, host: origin.host, signed });
    }
    this.#byIdentity.set(identity, entries);
    return signed.header;
  }

  async #signedFor(identity: Identity, origin: string, now: number): Promise<Signed> {
    // The origin as RFC 6454 writes it (host in lower case, no default port): what an app pins.
    const issuer = new URL(origin).origin;
    const audience = this.#settings.audience ?? issuer;
    const claims = assertedIdentity(identity, this.#access.get(identity));
    const content = JSON.stringify([issuer, audience, claims]);
    const known = this.#byContent.get(content);
    if (known !== undefined && known.renewAt > now) return known;
    let signing = this.#signing.get(content);
    if (signing === undefined) {
      signing = this.#sign(issuer, audience, claims, now).finally(() => this.#signing.delete(content));
      this.#signing.set(content, signing);
    }
    const signed = await signing;
    this.#byContent.set(content, signed);
    return signed;
  }

  async #sign(issuer: string, audience: string, claims: object, now: number): Promise<Signed> {
    const key = await this.#ring.signingKey();
    const lifetimeMs = this.#settings.lifetimeMs;
    const issuedAt = Math.floor(now / 1000);
    const jwt = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + Math.floor(lifetimeMs / 1000))
      .sign(key.key);
    return {
      header: Object.freeze([this.headerName, jwt] as const),
      renewAt: issuedAt * 1000 + Math.floor((lifetimeMs * 2) / 3),
    };
  }
}

function forOrigin(entries: readonly ForOrigin[], origin: Origin): ForOrigin | undefined {
  for (const entry of entries) if (entry.host === origin.host && entry.scheme === origin.scheme) return entry;
  return undefined;
}
