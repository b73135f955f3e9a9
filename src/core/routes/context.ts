// What the routes of the auth layer share: the layer's parts (LayerContext), and the session a
// request names as the /.auth routes and the excluded paths take it (a forged or expired
// authentication token naming none). The protected path reads the request and its session itself
// (http/request-view.ts, session/cookie.ts).
import type { LRUCache } from 'lru-cache';

import type { Logger } from '../../logging.js';
import type { AuthMetrics } from '../auth-metrics.js';
import type { AuthConfig } from '../config/auth-config.js';
import type { RequestView, RouteRequest } from '../http/request-view.js';
import type { Caller } from '../authorization/access-facts.js';
import type { Authorizer } from '../authorization/authorizer.js';
import type { Identity } from '../identity.js';
import type { Provider } from '../providers/provider.js';
import type { AuthenticationTokens } from '../tokens/authentication-token.js';
import { InvalidTokenError } from '../tokens/errors.js';
import type { ValidatedTokenCache } from '../tokens/validated-token-cache.js';
import { namedSession, type SessionCookie } from '../session/cookie.js';
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
