// What the routes of the auth layer share: the layer's parts (LayerContext), one request as
// they see it (LayerRequest), and the credentials it carries: a bearer token, or the session its
// authentication token or session cookie names.
import type { LRUCache } from 'lru-cache';

import type { Logger } from '../../logging.js';
import type { AuthMetrics } from '../auth-metrics.js';
import type { AuthConfig } from '../config/auth-config.js';
import type { Origin } from '../http/origin.js';
import { headerValue, wantsJson, type RequestView } from '../http/request-view.js';
import type { Caller } from '../authorization/access-facts.js';
import type { Authorizer } from '../authorization/authorizer.js';
import type { Identity } from '../identity.js';
import type { Provider } from '../providers/provider.js';
import type { AuthenticationTokens } from '../tokens/authentication-token.js';
import { InvalidTokenError } from '../tokens/errors.js';
import type { ValidatedTokenCache } from '../tokens/validated-token-cache.js';
import type { SessionCookie } from '../session/cookie.js';
import type { ExchangedSessions } from '../session/exchanged-sessions.js';
import type { SessionRecord } from '../session/record.js';
import type { Sessions } from '../session/sessions.js';

/** What every route handler of the auth layer works with. */
export interface LayerContext {
  readonly config: AuthConfig;
  readonly sessions: Sessions;
  /** The session cookie: read, verified, set and cleared there alone. */
  readonly sessionCookie: SessionCookie;
  readonly providers: ReadonlyMap<string, Provider>;
  /** Key for the sealed login-transaction and logout-state values. */
  readonly transactionKey: Buffer;
  /** Authentication tokens (X-ZUMO-AUTH) of the client-directed flow. */
  readonly authTokens: AuthenticationTokens;
  /** Bearer tokens already validated, until they expire. */
  readonly bearerCache: ValidatedTokenCache<BearerCaller>;
  /** Which providers accept which bearer-token issuers (learned on first sight). */
  /** Issuers some provider accepted, bounded (made-up issuers are never remembered). */
  readonly bearerIssuers: LRUCache<string, readonly Provider[]>;
  /** Sessions token exchange made, by what was exchanged: the same token exchanged again gets its session back. */
  readonly exchangedSessions: ExchangedSessions<SessionRecord>;
  readonly logger: Logger;
  readonly now: () => number;
  readonly version: string;
  /** Where sign-ins, refreshes and logouts are counted. */
  readonly metrics: AuthMetrics;
  /** Which token store runs and whether it can be reached (/.auth/version). */
  readonly storeHealth?: { readonly kind: string; readonly available: boolean };
  /** Who may get in (the configuration's authorization rules), with its verdicts per caller. */
  readonly authorizer: Authorizer;
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
  context: Pick<LayerContext, 'authTokens' | 'sessionCookie'>,
  view: RequestView,
  expiredGraceMs = 0,
): Promise<NamedSession> {
  const token = headerValue(view, AUTHENTICATION_TOKEN_HEADER);
  if (token !== undefined) return { id: await context.authTokens.sessionId(token, expiredGraceMs), via: 'token' };
  const cookie = context.sessionCookie.read(view);
  return cookie.state === 'valid' ? { id: cookie.id, via: 'cookie' } : { id: null, cookie: cookie.state };
}

/**
 * The bearer token of `Authorization: Bearer <token>`, undefined when the header is absent or another scheme.
 * "Bearer" alone (servers trim the trailing space) is an empty token, not another scheme. The token itself is
 * not scanned here: whatever follows the scheme is the token, and anything that is not a signed JWT is refused
 * as one (401 invalid_token), so a malformed credential is never mistaken for no credential.
 */
export function bearerToken(request: RouteRequest): string | undefined {
  const header = headerValue(request.view, 'authorization');
  if (header === undefined || header.length < 6 || header.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const rest = header.slice(6);
  if (rest.trim() === '') return '';
  // The scheme ends at a space ("Bearerish x" is another scheme).
  return rest.charCodeAt(0) === 0x20 ? rest.trim() : undefined;
}

/** namedSession, with a forged or expired authentication token naming no session (where no reason is owed). */
export async function namedSessionOrNone(
  context: Pick<LayerContext, 'authTokens' | 'sessionCookie'>,
  view: RequestView,
  expiredGraceMs = 0,
): Promise<{ readonly id: string; readonly via: 'token' | 'cookie' } | null> {
  try {
    const named = await namedSession(context, view, expiredGraceMs);
    return named.id === null ? null : named;
  } catch (error) {
    if (error instanceof InvalidTokenError) return null;
    throw error;
  }
}

/** The caller's live session, or undefined (no cookie or token, a forged one, an absent or invalid record). */
export async function currentSession(
  context: LayerContext,
  request: RouteRequest,
): Promise<{ readonly id: string; readonly record: SessionRecord } | undefined> {
  const named = await namedSessionOrNone(context, request.view);
  if (named === null) return undefined;
  const record = await context.sessions.load(named.id);
  const assessment = context.sessions.assess(record, request.origin.host);
  if (assessment.kind === 'reauth' || record === undefined) return undefined;
  return { id: named.id, record };
}

/** A validated bearer token's holder: the identity sent to the app, and the caller rules judge. */
export interface BearerCaller {
  readonly identity: Identity;
  readonly caller: Caller;
}

/**
 * Whether a 401 serves the caller better than a redirect to a sign-in page:
 * an API call (wantsJson), or a WebSocket handshake, which cannot follow a redirect.
 */
export function callerWantsJson(view: RequestView): boolean {
  return wantsJson(view) || headerValue(view, 'upgrade') !== undefined;
}

/** One request as the routes see it: the view plus its validated origin. */
export interface RouteRequest {
  readonly view: RequestView;
  readonly origin: Origin;
  readonly secure: boolean;
  readonly json: boolean;
  readonly searchParams: URLSearchParams;
}

/** A RouteRequest made once per request: a class, so that the lazy query getter is shared, not a closure per request. */
export class LayerRequest implements RouteRequest {
  readonly secure: boolean;
  #searchParams: URLSearchParams | undefined;
  #json: boolean | undefined;

  constructor(
    readonly view: RequestView,
    readonly origin: Origin,
  ) {
    this.secure = origin.scheme === 'https';
  }

  /** Read only when the answer is a challenge or an error page, not on every forwarded request. */
  get json(): boolean {
    return (this.#json ??= callerWantsJson(this.view));
  }

  /** Parsed only by the /.auth routes that read it, not on every proxied request. */
  get searchParams(): URLSearchParams {
    return (this.#searchParams ??= new URLSearchParams(this.view.query));
  }
}
