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
import type { ValidatedTokenCache } from '../tokens/validated-token-cache.js';
import type { ExchangedSessions } from '../session/exchanged-sessions.js';
import type { SessionRecord } from '../session/record.js';
import type { Sessions } from '../session/sessions.js';

/** What every route handler of the auth layer works with. */
export interface LayerContext {
  readonly config: AuthConfig;
  readonly sessions: Sessions;
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
