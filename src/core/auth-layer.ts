// AuthLayer.decide(RequestView) → Decision: the whole auth core (docs/architecture.md#the-decision).
// Hosts (the Koa sidecar, the in-server module) only adapt requests to it
// and apply what it decides.
import { createLogger, type Logger } from '../logging.js';
import { layerAssertions, type LayerAssertions } from './assertion/assertion-keys.js';
import type { AssertionHeader } from './assertion/signer.js';
import type { Caller } from './authorization/access-facts.js';
import { callerOf } from './authorization/record-caller.js';
import type { AuthConfig } from './config/auth-config.js';
import { matchExcludedPath } from './excluded-paths.js';
import { isCorsPreflight } from './http/cors-preflight.js';
import { forwardEdits, type HeaderPolicy } from './http/header-policy.js';
import {
  bearerToken,
  behindTrustedProxy,
  callerWantsJson,
  LayerRequest,
  requestOrigin,
  type Decision,
  type Origin,
  type RequestView,
  type RouteRequest,
  type Verdict,
} from './http/request-view.js';
import { errorDecision, redirectDecision } from './http/responses.js';
import { createProviders } from './providers/registry.js';
import type { Identity } from './identity.js';
import type { Provider } from './providers/provider.js';
import { identityFromRecord } from './principal.js';
import { authRoute } from './routes/auth-routes.js';
import { challenge } from './routes/challenge.js';
import { bearerIdentity, invalidTokenDecision } from './routes/client-directed.js';
import { currentSession, type LayerContext } from './routes/context.js';
import { refusalDecision } from './routes/refusal.js';
import { namedSession, type NamedSession } from './session/cookie.js';
import { LifecycleError, transition, type LifecycleTrigger, type Transition } from './session/lifecycle.js';
import type { SessionRecord } from './session/record.js';
import type { RefreshOutcome } from './session/sessions.js';
import { StoreUnavailableError } from './token-store/token-store.js';
import { InvalidTokenError } from './tokens/errors.js';
import { layerContext, type AuthLayerOptions } from './layer-context.js';

export type { AuthLayerOptions, StoreHealth } from './layer-context.js';

/** How soon a caller turned away while the token store is unavailable should try again (s). */
const STORE_RETRY_AFTER_SECONDS = '5';

export class AuthLayer {
  readonly #context: LayerContext;
  readonly #headerPolicy: HeaderPolicy;
  readonly #identities = new WeakMap<SessionRecord, Identity>();
  /** The signed identity assertion (gatehouse.identityAssertion); undefined when off. */
  readonly #assertions: LayerAssertions | undefined;
  /** One Caller per cached session record, so rules' verdicts are remembered per session (Authorizer). */
  readonly #callers = new WeakMap<SessionRecord, Caller>();
  /** Whether any authorization rule is configured: known when the layer is made, as the rules do not change. */
  readonly #rulesConfigured: boolean;

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
    this.#context = layerContext(options, providers, logger, now);
    this.#rulesConfigured = this.#context.authorizer.restricts;
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
      return authRoute(this.#context, this.#assertions?.ring, request, view.path.slice(prefix.length));
    if (this.#excluded(view.path)) {
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
    if (!ownRoute && this.#excluded(view.path)) return { kind: 'forward', identity: null };
    logger.debug({ path: view.path, reason: error.message }, 'token store unavailable: request turned away');
    return errorDecision(
      503,
      'Service unavailable',
      'Sign-in is unavailable for a moment. Please try again shortly.',
      callerWantsJson(view),
      { headers: { 'Retry-After': STORE_RETRY_AFTER_SECONDS } },
    );
  }

  /**
   * Whether `path` is served without authentication (globalValidation.excludedPaths). With none
   * configured, excluded-paths.ts is not called at all: a signed-in request never crosses it
   * (docs/architecture.md, "A signed-in GET").
   */
  #excluded(path: string): boolean {
    const rules = this.#context.config.excludedPaths;
    return rules.length > 0 && matchExcludedPath(rules, path) !== undefined;
  }

  #toHttps(request: RouteRequest): Decision {
    const { view } = request;
    if (view.method !== 'GET' && view.method !== 'HEAD') {
      this.#context.logger.info({ reason: 'https required', path: view.path, method: view.method }, 'request rejected');
      return errorDecision(403, 'HTTPS required', 'This site requires HTTPS.', request.json);
    }
    return redirectDecision(`https://${request.origin.host}${view.path}${view.query ? `?${view.query}` : ''}`);
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
          return challenge(this.#context, request, reason, clearCookie);
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
    if (this.#rulesConfigured) {
      const caller = this.#caller(record);
      const refusal = this.#context.authorizer.refusal(caller, request.view.method, request.view.path);
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
}
