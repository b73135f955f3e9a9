// AuthLayer.decide(RequestView) → Decision: the whole auth core (docs/architecture.md#the-decision).
// Hosts (the Koa sidecar, the in-server module) only adapt requests to it
// and apply what it decides.
import { LRUCache } from 'lru-cache';

import { createLogger, type Logger } from '../logging.js';
import { NO_METRICS, type AuthMetrics } from './auth-metrics.js';
import { layerAssertions, type LayerAssertions } from './assertion/assertion-keys.js';
import type { AssertionKeyRing } from './assertion/key-ring.js';
import type { AssertionHeader } from './assertion/signer.js';
import type { Caller } from './authorization/access-facts.js';
import { Authorizer } from './authorization/authorizer.js';
import { OPEN_POLICY } from './authorization/policy.js';
import { callerOf } from './authorization/record-caller.js';
import type { AuthConfig } from './config/auth-config.js';
import { aliasIgnoringCase } from './config/provider-settings.js';
import { deriveKey } from './crypto/keys.js';
import { matchExcludedPath } from './excluded-paths.js';
import { isCorsPreflight } from './http/cors-preflight.js';
import { forwardEdits, type HeaderPolicy } from './http/forward-edits.js';
import type { HeaderNormalizer } from './http/identity-headers.js';
import { behindTrustedProxy, requestOrigin, type Origin } from './http/origin.js';
import type { Decision, RequestView, Verdict } from './http/request-view.js';
import {
  errorDecision,
  escapeHtml,
  fragmentPreservingRedirect,
  jsonDecision,
  pageDecision,
  redirectDecision,
  type PageLink,
} from './http/responses.js';
import { createProviders } from './providers/registry.js';
import type { Identity } from './identity.js';
import type { Provider } from './providers/provider.js';
import { identityFromRecord } from './principal.js';
import { challengeReturnUrl } from './return-url.js';
import { loginDone, logout, logoutComplete, logoutDone, me, ready, refresh, version } from './routes/account-routes.js';
import {
  callerWantsJson,
  currentSession,
  LayerRequest,
  namedSession,
  type LayerContext,
  type NamedSession,
  type RouteRequest,
} from './routes/context.js';
import { assertionKeys } from './routes/assertion-keys.js';
import { backChannelLogout } from './routes/back-channel-logout.js';
import { frontChannelLogout } from './routes/front-channel-logout.js';
import { clientKeys } from './routes/client-keys.js';
import { bearerIdentity, bearerToken, exchangeToken, invalidTokenDecision } from './routes/client-directed.js';
import { finishLogin, loginPath, returnUrlParameter, startLogin } from './routes/login-flow.js';
import { refusalDecision } from './routes/refusal.js';
import { LifecycleError, transition, type LifecycleTrigger, type Transition } from './session/lifecycle.js';
import type { SessionRecord } from './session/record.js';
import { SessionCookie } from './session/cookie.js';
import { ExchangedSessions } from './session/exchanged-sessions.js';
import { SessionActivity, type LastSeen } from './session/activity.js';
import type { ProviderSignOut } from './session/provider-sign-outs.js';
import { Sessions, type RefreshOutcome } from './session/sessions.js';
import { MemoryTokenStore } from './token-store/memory.js';
import { StoreUnavailableError, type TokenStore } from './token-store/token-store.js';
import { AuthenticationTokens } from './tokens/authentication-token.js';
import { InvalidTokenError } from './tokens/errors.js';
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

/** How soon a caller turned away while the token store is unavailable should try again (s). */
const STORE_RETRY_AFTER_SECONDS = '5';

const LOGIN_PATH = /^\/login\/([A-Za-z0-9][A-Za-z0-9_-]*)(\/callback)?$/;
/** Where a provider posts its back-channel logout tokens (the URL registered with it, so the alias exactly). */
const BACK_CHANNEL_LOGOUT_PATH = /^\/logout\/backchannel\/([A-Za-z0-9][A-Za-z0-9_-]*)$/;
/** Where a provider's logout page frames its front-channel logout (the URL registered with it, so the alias exactly). */
const FRONT_CHANNEL_LOGOUT_PATH = /^\/logout\/frontchannel\/([A-Za-z0-9][A-Za-z0-9_-]*)$/;
/** Where a provider finds the public key gatehouse authenticates to it with (private_key_jwt). */
const CLIENT_KEYS_PATH = /^\/client-keys\/([A-Za-z0-9][A-Za-z0-9_-]*)$/;

/**
 * The methods each of gatehouse's own fixed routes answers; any other is a 405 naming these.
 * Pages and reads take GET and HEAD; the routes that act (refresh, logout) take GET, as Easy Auth
 * clients call them, and POST, never HEAD, which must not change anything.
 */
const READ: readonly string[] = ['GET', 'HEAD'];
const ACT: readonly string[] = ['GET', 'POST'];
const OWN_ROUTE_METHODS: ReadonlyMap<string, readonly string[]> = new Map([
  ['/me', READ],
  ['/refresh', ACT],
  ['/logout', ACT],
  ['/logout/complete', READ],
  ['/logout/done', READ],
  ['/login/done', READ],
  ['/version', READ],
  ['/ready', READ],
  ['/keys', READ],
]);

/**
 * Sign-in paths by a provider's other name, sent on to the configured one (unless a provider of that
 * name is configured): Twitter is X now, and a link to /.auth/login/x should not be a 404.
 */
const OTHER_NAMES: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  x: 'twitter',
});

/** How many issuers some provider accepted are remembered (the least recently used forgotten first). */
const MAX_REMEMBERED_ISSUERS = 1_000;

/** The icons browsers fetch unasked (/favicon.ico, Safari's apple-touch-icon*.png). */
const BROWSER_ICON = /^\/(?:favicon\.ico|apple-touch-icon[\w-]*\.png)$/;

/** What keeps the idle timeout, when the configuration sets one. */
function sessionActivity(options: AuthLayerOptions, logger: Logger, now: () => number): SessionActivity | undefined {
  const idleTimeoutMs = options.config.cookieExpiration.idleTimeoutMs;
  if (idleTimeoutMs === undefined) return undefined;
  return new SessionActivity(idleTimeoutMs, options.activityStore ?? new MemoryTokenStore(now), logger, now);
}

export class AuthLayer {
  readonly #context: LayerContext;
  readonly #headerPolicy: HeaderPolicy;
  readonly #identities = new WeakMap<SessionRecord, Identity>();
  /** The signed identity assertion (gatehouse.identityAssertion); undefined when off. */
  readonly #assertions: LayerAssertions | undefined;
  /** One Caller per cached session record, so rules' verdicts are remembered per session (Authorizer). */
  readonly #callers = new WeakMap<SessionRecord, Caller>();

  constructor(options: AuthLayerOptions) {
    const logger = options.logger ?? createLogger();
    const now = options.now ?? Date.now;
    const providers = createProviders(options.config.providers, now);
    this.#assertions = layerAssertions(options.config, options.assertionKeys, now);
    this.#headerPolicy = {
      normalizer: options.headers,
      options: { prefix: options.config.headerPrefix, exposeTokens: options.config.tokenStore.enabled },
      behindTrustedProxy: behindTrustedProxy(options.config),
    };
    this.#context = {
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

  get config(): AuthConfig {
    return this.#context.config;
  }

  /** The configured providers, by alias. */
  get providers(): ReadonlyMap<string, Provider> {
    return this.#context.providers;
  }

  /** Where the layer logs; hosts log their own failures around it there too. */
  get logger(): Logger {
    return this.#context.logger;
  }

  async decide(view: RequestView): Promise<Decision> {
    const origin = requestOrigin(view, this.#context.config);
    const verdict = await this.#verdict(view, origin).catch((error: unknown) => this.#storeUnavailable(view, error));
    if (verdict.kind !== 'forward') return verdict;
    // Only with authentication off can a request with an unusable host be forwarded: its own then.
    const judged = origin ?? { scheme: view.scheme, host: view.host };
    let identity = verdict.identity;
    let assertion: AssertionHeader | undefined;
    if (identity !== null && this.#assertions !== undefined) {
      const { signer } = this.#assertions;
      try {
        assertion = signer.cached(identity, judged) ?? (await signer.header(identity, judged));
      } catch (error) {
        // The keys' store cannot be reached: fail closed as for sessions (an excluded path goes on anonymously).
        const fallback = this.#storeUnavailable(view, error);
        if (fallback.kind !== 'forward') return fallback;
        identity = null;
      }
    }
    return {
      kind: 'forward',
      identity,
      origin: judged,
      edits: forwardEdits(this.#headerPolicy, view.headers, identity, judged, view.remoteAddress, assertion),
    };
  }

  async #verdict(view: RequestView, origin: Origin | null): Promise<Verdict> {
    const { config, logger } = this.#context;
    if (!config.enabled) return { kind: 'forward', identity: null };
    if (origin === null) {
      logger.warn({ reason: 'invalid host', path: view.path }, 'request rejected');
      return errorDecision(400, 'Bad request', 'The Host header is not valid.', callerWantsJson(view));
    }
    const request = new LayerRequest(view, origin);
    if (config.requireHttps && origin.scheme !== 'https') return this.#toHttps(request);

    const prefix = config.apiPrefix;
    if (view.path === prefix || view.path.startsWith(`${prefix}/`))
      return this.#authRoute(request, view.path.slice(prefix.length));
    if (matchExcludedPath(config.excludedPaths, view.path) !== undefined) {
      // Anonymous access allowed; a signed-in caller is still identified (a bad token just stays anonymous).
      const bearer = bearerToken(request);
      if (bearer !== undefined) {
        const checked = await bearerIdentity(this.#context, request, bearer);
        return { kind: 'forward', identity: 'identity' in checked ? checked.identity : null };
      }
      const session = await currentSession(this.#context, request);
      return {
        kind: 'forward',
        identity: session ? identityFromRecord(session.record, config.tokenStore.enabled) : null,
      };
    }
    // Anonymous, whatever credentials it carries: a browser sends a preflight without any.
    if (config.forwardCorsPreflights && isCorsPreflight(view)) return { kind: 'forward', identity: null };
    return await this.#protected(request);
  }

  /**
   * The token store could not be reached (a shared store down, slow or restarting): fail closed.
   * The request is neither taken as anonymous nor answered with a 500: 503 with Retry-After, except
   * on an excluded path, which anyone may reach anyway and which is then forwarded anonymously
   * (health checks keep answering). The store's own link logs each change of its state once.
   */
  #storeUnavailable(view: RequestView, error: unknown): Verdict {
    if (!(error instanceof StoreUnavailableError)) throw error;
    const { config, logger } = this.#context;
    const ownRoute = view.path === config.apiPrefix || view.path.startsWith(`${config.apiPrefix}/`);
    if (!ownRoute && matchExcludedPath(config.excludedPaths, view.path) !== undefined)
      return { kind: 'forward', identity: null };
    logger.debug({ path: view.path, reason: error.message }, 'token store unavailable: request turned away');
    return errorDecision(
      503,
      'Service unavailable',
      'Sign-in is unavailable for a moment. Please try again shortly.',
      callerWantsJson(view),
      { headers: { 'Retry-After': STORE_RETRY_AFTER_SECONDS } },
    );
  }

  #toHttps(request: RouteRequest): Decision {
    const { view } = request;
    if (view.method !== 'GET' && view.method !== 'HEAD') {
      this.#context.logger.info({ reason: 'https required', path: view.path, method: view.method }, 'request rejected');
      return errorDecision(403, 'HTTPS required', 'This site requires HTTPS.', request.json);
    }
    return redirectDecision(`https://${request.origin.host}${view.path}${view.query ? `?${view.query}` : ''}`);
  }

  async #authRoute(request: RouteRequest, route: string): Promise<Decision> {
    const context = this.#context;
    // gatehouse's own routes first: a provider alias can never shadow one (the config refuses "done").
    const methods = OWN_ROUTE_METHODS.get(route);
    if (methods !== undefined && !methods.includes(request.view.method))
      return this.#methodNotAllowed(request, methods.join(', '));
    switch (route) {
      case '/me':
        return me(context, request);
      case '/refresh':
        return refresh(context, request);
      case '/logout':
        return logout(context, request);
      case '/logout/complete':
        return logoutComplete(context, request);
      case '/logout/done':
        return logoutDone();
      case '/login/done':
        return loginDone(context, request);
      case '/ready':
        return ready(context);
      case '/version':
        return version(context);
      case '/keys':
        return assertionKeys(this.#assertions?.ring, request);
    }
    const backChannel = BACK_CHANNEL_LOGOUT_PATH.exec(route);
    if (backChannel !== null) {
      if (request.view.method !== 'POST') return this.#methodNotAllowed(request, 'POST');
      return backChannelLogout(context, request, backChannel[1]!);
    }
    const keys = CLIENT_KEYS_PATH.exec(route);
    if (keys !== null) {
      if (!READ.includes(request.view.method)) return this.#methodNotAllowed(request, READ.join(', '));
      return clientKeys(context.providers.get(keys[1]!), request);
    }
    const frontChannel = FRONT_CHANNEL_LOGOUT_PATH.exec(route);
    if (frontChannel !== null) {
      // GET only: a HEAD must change nothing.
      if (request.view.method !== 'GET') return this.#methodNotAllowed(request, 'GET');
      return frontChannelLogout(context, request, frontChannel[1]!);
    }
    const login = LOGIN_PATH.exec(route);
    if (login === null) {
      context.logger.info({ reason: 'no such endpoint', path: request.view.path }, 'request rejected');
      return errorDecision(404, 'Not found', 'No such authentication endpoint.', request.json);
    }
    const alias = login[1]!;
    const method = request.view.method;
    const provider = this.#provider(alias, login[2] !== undefined);
    if (provider === undefined) {
      // The alias matched LOGIN_PATH: letters, digits, '-' and '_' only, safe to log.
      context.logger.info({ reason: 'unknown provider', provider: alias, path: request.view.path }, 'request rejected');
      // A mistyped or outdated sign-in link: the page offers the providers there are.
      return errorDecision(
        404,
        'Unknown provider',
        `No identity provider "${alias}" is configured.`,
        request.json,
        {},
        this.#signInLinks(),
      );
    }
    if (provider.alias !== alias && (method === 'GET' || method === 'HEAD')) {
      // One address per sign-in start: its login cookie's path is the alias as configured.
      const query = request.view.query;
      return redirectDecision(`${loginPath(context.config.apiPrefix, provider.alias)}${query ? `?${query}` : ''}`);
    }
    if (login[2] !== undefined) {
      if (method !== 'GET' && method !== 'POST') return this.#methodNotAllowed(request, 'GET, POST');
      return finishLogin(context, request, provider);
    }
    if (method === 'POST') return exchangeToken(context, request, provider);
    if (method !== 'GET' && method !== 'HEAD') return this.#methodNotAllowed(request, 'GET, HEAD, POST');
    return startLogin(
      context,
      request,
      provider,
      returnUrlParameter(request.searchParams, ['post_login_redirect_uri', 'post_login_redirect_url']),
    );
  }

  /**
   * The provider a sign-in path names. Its alias is matched without regard to case: links are
   * written by hand, and /.auth/login/AAD should not be a 404 beside /.auth/login/aad (the
   * configuration refuses aliases that differ only in case), and by another name the provider goes
   * by (OTHER_NAMES). A callback only at the exact path: that is the redirect URI the provider was given.
   */
  #provider(alias: string, callback: boolean): Provider | undefined {
    const { providers } = this.#context;
    const exact = providers.get(alias);
    if (exact !== undefined || callback) return exact;
    const folded =
      aliasIgnoringCase(alias, providers) ?? aliasIgnoringCase(OTHER_NAMES[alias.toLowerCase()] ?? '', providers);
    return folded === undefined ? undefined : providers.get(folded);
  }

  #methodNotAllowed(request: RouteRequest, allow: string): Decision {
    this.#context.logger.info(
      { reason: 'method not allowed', path: request.view.path, method: request.view.method },
      'request rejected',
    );
    return jsonDecision(405, { error: 'Method not allowed.' }, { headers: { Allow: allow } });
  }

  /** A protected path: forward with identity, refresh, or challenge, as the lifecycle table says. */
  async #protected(request: RouteRequest): Promise<Verdict> {
    // Client-directed: a provider's bearer token, checked on its own (no session).
    const bearer = bearerToken(request);
    if (bearer !== undefined) {
      const checked = await bearerIdentity(this.#context, request, bearer);
      if (!('identity' in checked)) return checked.decision;
      const refusal = this.#context.authorizer.refusal(checked.caller, request.view.method, request.view.path);
      if (refusal !== undefined) return refusalDecision(this.#context, request, checked.caller, refusal, 'bearer');
      this.#assertions?.signer.noteAccess(checked.identity, checked.caller.access);
      return { kind: 'forward', identity: checked.identity };
    }
    // An authentication token (X-ZUMO-AUTH) names a session like the cookie does; its holder is an API client.
    let named: NamedSession;
    try {
      named = await namedSession(this.#context, request.view);
    } catch (error) {
      if (!(error instanceof InvalidTokenError)) throw error;
      this.#context.logger.info(
        { reason: `authentication token ${error.reason}`, path: request.view.path },
        'request challenged',
      );
      return invalidTokenDecision(error.reason);
    }
    return await this.#session(request, named);
  }

  /**
   * The session a protected request names, taken through the lifecycle table (session/lifecycle.ts):
   * the facts (the cookie's reading, the record's assessment, a refresh's outcome) pick each
   * transition, and the transition's effect is what is done next, until one answers the request.
   */
  async #session(request: RouteRequest, named: NamedSession): Promise<Verdict> {
    const { sessions } = this.#context;
    let record: SessionRecord | undefined;
    let step: Transition;
    // Why a challenge comes, and whether it clears a cookie the browser should stop sending.
    let reason = 'no session';
    let clearCookie = false;
    let keepRecord = false;
    if (named.id === null) {
      // A session cookie that does not verify (forged, tampered, another app's or key's) is worth telling
      // apart in the log from no cookie at all, and is cleared.
      if (named.cookie === 'invalid') [reason, clearCookie] = ['session cookie invalid', true];
      step = transition('Unauthenticated', 'protectedRequest');
    } else {
      record = await sessions.load(named.id);
      const assessment = sessions.assess(record, request.origin.host);
      clearCookie = true;
      if (assessment.kind === 'reauth' || record === undefined) {
        reason = assessment.kind === 'reauth' ? assessment.reason : 'record-missing';
        // An expired record is kept for its refresh extension (the store sweeps it); anything else is gone for good.
        keepRecord = reason === 'cookie-expired';
        step = transition('AuthenticatedSession', 'sessionInvalidated');
      } else {
        step = transition('AuthenticatedSession', 'sessionChecked');
        // The access token nears its expiry: renewed before the request goes on.
        if (assessment.kind === 'expiring') step = transition(step.to, 'timePasses');
      }
    }
    // Only a named session's states lead past a challenge: there, record and id are known.
    for (;;) {
      switch (step.effect) {
        case 'forwardWithIdentity':
          return this.#forwardSession(request, record!);
        case 'refreshTokens': {
          const outcome = await sessions.refresh(named.id!, record!);
          if (outcome.ok) record = outcome.record;
          else reason = `refresh ${outcome.reason}`;
          step = transition(step.to, this.#refreshTrigger(outcome, record!));
          break;
        }
        case 'none':
          step = transition(step.to, 'automatic');
          break;
        case 'deleteSession':
          if (record !== undefined && !keepRecord) await sessions.destroy(named.id!);
          // The request that found the session over is challenged, as every next one would be.
          step = transition(step.to, 'nextRequest');
          break;
        case 'redirectToProvider':
          // An authentication token's holder is an API client: told its session ended, not sent to sign in.
          if (named.id !== null && named.via === 'token') return invalidTokenDecision('session ended');
          return this.#challenge(request, reason, clearCookie);
        case 'storeTokensAndSetCookie':
          throw new LifecycleError('a sign-in completes at its callback, never on a protected path');
      }
    }
  }

  /** Which way a refresh goes: renewed, deferred while the provider is down and the token still valid, or failed. */
  #refreshTrigger(outcome: RefreshOutcome, record: SessionRecord): LifecycleTrigger {
    if (outcome.ok) return 'refreshSucceeded';
    const stillValid = (record.tokens.accessTokenExpiresAt ?? 0) > this.#context.now();
    return outcome.reason === 'unavailable' && stillValid ? 'refreshDeferred' : 'refreshFailed';
  }

  /** A live session's request, let through unless an authorization rule refuses its caller. */
  #forwardSession(request: RouteRequest, record: SessionRecord): Verdict {
    const { authorizer } = this.#context;
    if (authorizer.restricts) {
      const caller = this.#caller(record);
      const refusal = authorizer.refusal(caller, request.view.method, request.view.path);
      if (refusal !== undefined) return refusalDecision(this.#context, request, caller, refusal, 'session');
    }
    return { kind: 'forward', identity: this.#identity(record) };
  }

  /** One Caller per cached session record: its verdicts are judged once and remembered with it. */
  #caller(record: SessionRecord): Caller {
    let caller = this.#callers.get(record);
    if (caller === undefined) {
      caller = callerOf(record, record.access);
      this.#callers.set(record, caller);
    }
    return caller;
  }

  /**
   * One Identity object per cached session record, so hosts can build its
   * headers once (records are immutable; a refresh makes a new one).
   */
  #identity(record: SessionRecord): Identity {
    let identity = this.#identities.get(record);
    if (identity === undefined) {
      identity = identityFromRecord(record, this.#context.config.tokenStore.enabled);
      this.#assertions?.signer.noteAccess(identity, record.access);
      this.#identities.set(record, identity);
    }
    return identity;
  }

  #challenge(request: RouteRequest, reason: string, clearCookie: boolean): Verdict {
    const { config, logger, sessionCookie } = this.#context;
    const { view } = request;
    // Anonymous callers may come in unless a rule says who may open this path: then they sign in first.
    if (!config.requireAuthentication && !this.#context.authorizer.restrictsPath(view.method, view.path))
      return { kind: 'forward', identity: null };
    const cookies = clearCookie ? [sessionCookie.clear(request.secure)] : [];
    // A browser asks for its icons by itself on every new site: those challenges are not news.
    const level = BROWSER_ICON.test(view.path) ? 'debug' : 'info';
    logger[level](
      { reason, path: view.path, method: view.method, action: config.unauthenticatedAction },
      'request challenged',
    );
    switch (config.unauthenticatedAction) {
      case 'Return403':
        return errorDecision(403, 'Forbidden', 'You do not have access to this resource.', request.json, { cookies });
      case 'Return404':
        return errorDecision(404, 'Not found', 'Not found.', request.json, { cookies });
      case 'Return401':
      case 'AllowAnonymous':
        return this.#unauthorized(request, cookies);
      case 'RedirectToLoginPage':
        break;
    }
    if (request.json || (view.method !== 'GET' && view.method !== 'HEAD')) return this.#unauthorized(request, cookies);
    const returnTo = challengeReturnUrl(view.path, view.query, config.apiPrefix);
    if (config.defaultProvider !== undefined) {
      // The fragment is added in the browser: the page's script ends the URL with the return address.
      if (config.preserveUrlFragmentsForLogins)
        return fragmentPreservingRedirect(
          `${loginPath(config.apiPrefix, config.defaultProvider)}?post_login_redirect_uri=`,
          returnTo,
          cookies,
        );
      return redirectDecision(loginPath(config.apiPrefix, config.defaultProvider, returnTo), { cookies });
    }
    const links = this.#signInLinks(returnTo).map(
      (link) => `<li><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></li>`,
    );
    return pageDecision(401, 'Sign in', 'Choose how to sign in:', { cookies }, `<ul>${links.join('')}</ul>`);
  }

  /** A sign-in link per configured provider, coming back to `returnTo` when given. */
  #signInLinks(returnTo?: string): PageLink[] {
    const { config, providers } = this.#context;
    return [...providers.values()].map((provider) => ({
      href: loginPath(config.apiPrefix, provider.alias, returnTo),
      text: `Sign in with ${provider.displayName}`,
    }));
  }

  /**
   * A 401. A person in a browser gets a page with a way to sign in and come back: a form POSTed
   * after the session ended (challenges redirect GET and HEAD only) or a site set to Return401
   * otherwise leaves them on "Authentication required" with nowhere to go. The links are only
   * links: nothing is followed without them.
   */
  #unauthorized(request: RouteRequest, cookies: string[]): Decision {
    const extra = { cookies, headers: { 'WWW-Authenticate': 'Bearer' } };
    if (request.json) return errorDecision(401, 'Sign-in required', 'Authentication required.', true, extra);
    const { config } = this.#context;
    const returnTo = challengeReturnUrl(request.view.path, request.view.query, config.apiPrefix);
    const links =
      config.defaultProvider !== undefined
        ? [{ href: loginPath(config.apiPrefix, config.defaultProvider, returnTo), text: 'Sign in' }]
        : this.#signInLinks(returnTo);
    return errorDecision(401, 'Sign-in required', 'Authentication required.', false, extra, links);
  }
}
