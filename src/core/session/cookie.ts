// The session cookie (docs/architecture.md#sessions-and-the-token-store): the one place that
// finds it among a request's cookies, verifies the signed session id it carries, and writes the
// Set-Cookie values that set and clear it. Nothing else reads or builds it. An API client's
// authentication token (X-ZUMO-AUTH) stands in for it: namedSession reads the one a request sends.
import { LRUCache } from 'lru-cache';

import { signSessionId, verifySessionCookie } from '../crypto/session-id.js';
import { headerValue, scanCookies, type RequestView } from '../http/request-view.js';
import { nameRequiresSecure, setCookie } from '../http/responses.js';
import type { AuthenticationTokens } from '../tokens/authentication-token.js';

/** What a request's session cookie says: the session id it carries, or that it carries none. */
export type CookieReading =
  | { readonly state: 'valid'; readonly id: string }
  /** No cookie of the session cookie's name. */
  | { readonly state: 'absent' }
  /** One or more, none of which verifies: forged, tampered, another app's or another key's. */
  | { readonly state: 'invalid' };

const ABSENT: CookieReading = { state: 'absent' };
const INVALID: CookieReading = { state: 'invalid' };

/** How many cookie values that verified are remembered (the hot path then skips the HMAC). */
export const VERIFIED_COOKIES_MAX = 10_000;

/**
 * How many cookies of the session cookie's name one request may have checked. A browser sends
 * two or three at most (one per path or domain that set it); this bounds the HMACs a crafted
 * Cookie header can ask for.
 */
export const MAX_SESSION_COOKIES_CHECKED = 4;

export class SessionCookie {
  /** Readings by cookie value, for values that verified only: a forgery is never remembered. */
  readonly #verified = new LRUCache<string, CookieReading>({ max: VERIFIED_COOKIES_MAX });

  constructor(
    /** The cookie's name (gatehouse.sessionCookieName). */
    readonly name: string,
    /** The key its MAC is made with: derived for this purpose alone (crypto/keys.ts). */
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The session the request's cookie names. Cookies are matched by their exact name, in every
   * Cookie header, in the order sent; of several with that name (set for another path or by a
   * parent domain), the first that verifies counts, so a stale or planted one before it cannot
   * lock a signed-in browser out. A value is verified before any store lookup, in constant time.
   */
  read(request: Pick<RequestView, 'headers'>): CookieReading {
    let reading = ABSENT;
    let checked = 0;
    scanCookies(request, (name, header, from, to) => {
      if (name !== this.name) return false;
      reading = this.#verify(header.slice(from, to).trim());
      return reading.state === 'valid' || ++checked === MAX_SESSION_COOKIES_CHECKED;
    });
    return reading;
  }

  #verify(value: string): CookieReading {
    const known = this.#verified.get(value);
    if (known !== undefined) return known;
    const id = verifySessionCookie(this.key, value);
    if (id === null) return INVALID;
    const reading: CookieReading = { state: 'valid', id };
    this.#verified.set(value, reading);
    return reading;
  }

  /** The Set-Cookie value that gives a browser the session `id`, kept until `expiresAt` (ms). */
  set(id: string, expiresAt: number, secure: boolean): string {
    return setCookie({
      name: this.name,
      value: signSessionId(this.key, id),
      secure,
      maxAgeSeconds: Math.max(0, Math.floor((expiresAt - this.now()) / 1000)),
    });
  }

  /** The Set-Cookie value that removes the session cookie from a browser. */
  clear(secure: boolean): string {
    return setCookie({ name: this.name, value: '', secure, maxAgeSeconds: 0 });
  }

  /** Whether browsers keep this cookie only over https (a `__Secure-` or `__Host-` name). */
  get requiresHttps(): boolean {
    return nameRequiresSecure(this.name);
  }
}

/** The header an authentication token (the client-directed flow's session token) comes in. */
const AUTHENTICATION_TOKEN_HEADER = 'x-zumo-auth';

/**
 * The session a request names, or why it names none: no session credential at all, or only a
 * session cookie that does not verify (worth telling apart in the log, and cleared).
 */
export type NamedSession =
  | { readonly id: string; readonly via: 'token' | 'cookie' }
  | { readonly id: null; readonly cookie: 'absent' | 'invalid' };

/**
 * The session the request names: its X-ZUMO-AUTH authentication token if it sends one (then the
 * cookie is not looked at), else its session cookie. InvalidTokenError for a forged or expired
 * token (one expired less than `expiredGraceMs` ago still counts).
 */
export async function namedSession(
  credentials: { readonly authTokens: AuthenticationTokens; readonly sessionCookie: SessionCookie },
  view: Pick<RequestView, 'headers'>,
  expiredGraceMs = 0,
): Promise<NamedSession> {
  const token = headerValue(view, AUTHENTICATION_TOKEN_HEADER);
  if (token !== undefined) return { id: await credentials.authTokens.sessionId(token, expiredGraceMs), via: 'token' };
  const cookie = credentials.sessionCookie.read(view);
  return cookie.state === 'valid' ? { id: cookie.id, via: 'cookie' } : { id: null, cookie: cookie.state };
}
