// What an auth layer is made of: its options, and the parts its routes share (the LayerContext),
// built from them once when the layer is made.
import { LRUCache } from 'lru-cache';

import type { Logger } from '../logging.js';
import { NO_METRICS, type AuthMetrics } from './auth-metrics.js';
import type { AssertionKeyRing } from './assertion/key-ring.js';
import { Authorizer } from './authorization/authorizer.js';
import { OPEN_POLICY } from './authorization/policy.js';
import type { AuthConfig } from './config/auth-config.js';
import { deriveKey } from './crypto/keys.js';
import type { HeaderNormalizer } from './http/header-policy.js';
import type { Provider } from './providers/provider.js';
import type { LayerContext } from './routes/context.js';
import { SessionActivity, type LastSeen } from './session/activity.js';
import { SessionCookie } from './session/cookie.js';
import { ExchangedSessions } from './session/exchanged-sessions.js';
import type { ProviderSignOut } from './session/provider-sign-outs.js';
import type { SessionRecord } from './session/record.js';
import { Sessions } from './session/sessions.js';
import { MemoryTokenStore } from './token-store/memory.js';
import type { TokenStore } from './token-store/token-store.js';
import { AuthenticationTokens } from './tokens/authentication-token.js';
import { ValidatedTokenCache } from './tokens/validated-token-cache.js';

export interface AuthLayerOptions {
  readonly config: AuthConfig;
  readonly store: TokenStore<SessionRecord>;
  /** Where providers' back-channel sign-outs are kept (default: in memory, this process only); shared like `store`. */
  readonly signOutStore?: TokenStore<ProviderSignOut>;
  /** The provider sessions sign-ins were made in (front-channel logout); shared with signOutStore's instances. */
  readonly knownSessionStore?: TokenStore<ProviderSignOut>;
  /** 32-byte master key: cookies, login transactions. */
  readonly masterKey: Buffer;
  readonly logger?: Logger;
  readonly now?: () => number;
  readonly version?: string;
  /** Session cache lifetime (default SESSION_CACHE_TTL_MS; 0 reads the store on every request). */
  readonly sessionCacheTtlMs?: number;
  /** How many validated bearer tokens are remembered (default VALIDATED_TOKEN_CACHE_MAX; 0 checks every time). */
  readonly bearerCacheMax?: number;
  /** The shared core's header normalization (the native addon, or its fallback) the header policy is built on. */
  readonly headers: HeaderNormalizer;
  /** Which token store runs and whether it can be reached now, as /.auth/version tells. */
  readonly storeHealth?: StoreHealth;
  /** Where sign-ins, refreshes and logouts are counted (default: nowhere). */
  readonly metrics?: AuthMetrics;
  /** Where the sessions token exchange made are found by every instance (Redis; default: this process only). */
  readonly exchangeStore?: TokenStore<{ readonly id: string }>;
  /** With an idle timeout: when sessions were last used, shared like `store` (default: this process only). */
  readonly activityStore?: TokenStore<LastSeen>;
  /** The keys identity assertions are signed with (startAssertionKeys; default: this process's own, in memory). */
  readonly assertionKeys?: AssertionKeyRing;
}

export interface StoreHealth {
  readonly kind: string;
  readonly available: boolean;
}

/** How many issuers some provider accepted are remembered (the least recently used forgotten first). */
const MAX_REMEMBERED_ISSUERS = 1_000;

/** What keeps the idle timeout, when the configuration sets one. */
function sessionActivity(options: AuthLayerOptions, logger: Logger, now: () => number): SessionActivity | undefined {
  const idleTimeoutMs = options.config.cookieExpiration.idleTimeoutMs;
  if (idleTimeoutMs === undefined) return undefined;
  return new SessionActivity(idleTimeoutMs, options.activityStore ?? new MemoryTokenStore(now), logger, now);
}

/** The parts the layer's routes share, made from its options. */
export function layerContext(
  options: AuthLayerOptions,
  providers: ReadonlyMap<string, Provider>,
  logger: Logger,
  now: () => number,
): LayerContext {
  return {
    config: options.config,
    providers,
    sessions: new Sessions(
      options.config,
      options.store,
      providers,
      logger,
      now,
      options.sessionCacheTtlMs,
      options.signOutStore,
      options.metrics,
      options.knownSessionStore,
      sessionActivity(options, logger, now),
    ),
    sessionCookie: new SessionCookie(
      options.config.sessionCookieName,
      deriveKey(options.masterKey, 'session-cookie', options.config.app),
      now,
    ),
    transactionKey: deriveKey(options.masterKey, 'login-transaction', options.config.app),
    authTokens: new AuthenticationTokens(
      deriveKey(options.masterKey, 'authentication-token', options.config.app),
      options.config.app,
      now,
    ),
    bearerCache: new ValidatedTokenCache(now, options.bearerCacheMax),
    bearerIssuers: new LRUCache({ max: MAX_REMEMBERED_ISSUERS }),
    exchangedSessions: new ExchangedSessions<SessionRecord>(
      undefined,
      options.exchangeStore ? { store: options.exchangeStore, expiresAt: (record) => record.expiresAt } : undefined,
    ),
    logger,
    now,
    version: options.version ?? '0.0.0',
    metrics: options.metrics ?? NO_METRICS,
    authorizer: new Authorizer(options.config.authorization ?? OPEN_POLICY),
    ...(options.storeHealth !== undefined ? { storeHealth: options.storeHealth } : {}),
  };
}
