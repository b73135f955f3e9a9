// The client-directed flow: `Authorization: Bearer <provider JWT>` on any
// protected path, and token exchange at `POST /.auth/login/<provider>` that
// answers an authentication token for X-ZUMO-AUTH.
import { callerOf } from '../authorization/record-caller.js';
import { lacksUserId, unsendableHeaderValue, type Identity } from '../identity.js';
import {
  asSentence,
  type Decision,
  MAX_AUTH_BODY_BYTES,
  mediaType,
  readBoundedBody,
  type RouteRequest,
} from '../http/request-view.js';
import { jsonDecision } from '../http/responses.js';
import { ProviderRefusedError, ProviderUnavailableError } from '../providers/errors.js';
import type { Provider, SignIn, TokenExchange } from '../providers/provider.js';
import { ExchangedSessions } from '../session/exchanged-sessions.js';
import type { SessionRecord } from '../session/record.js';
import { InvalidTokenError, TokenForbiddenError } from '../tokens/errors.js';
import { introspectingProviders } from '../tokens/introspecting-providers.js';
import { isOpaqueToken } from '../tokens/introspection.js';
import { MAX_TOKEN_LENGTH, peekToken, type PeekedToken } from '../tokens/jwt-validator.js';
import { ValidatedTokenCache } from '../tokens/validated-token-cache.js';
import type { BearerCaller, LayerContext } from './context.js';
import { sessionRecord } from './login-flow.js';

/** 401 as RFC 6750 §3 describes it: the reason in WWW-Authenticate and in the JSON body. */
export function invalidTokenDecision(description: string): Decision {
  const safe = description.replace(/["\\\r\n]/g, ' ').slice(0, 120);
  return jsonDecision(
    401,
    { error: 'invalid_token', error_description: safe },
    { headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${safe}"` } },
  );
}

/** The identity a bearer token proves (and the caller rules judge), or the 401/403/503 to answer. */
export async function bearerIdentity(
  context: LayerContext,
  request: RouteRequest,
  token: string,
): Promise<BearerCaller | { decision: Decision }> {
  if (token === '' || token.length > MAX_TOKEN_LENGTH)
    return refuseToken(context, request, token === '' ? 'empty token' : 'token too large');
  const cacheKey = ValidatedTokenCache.key(token);
  const cached = context.bearerCache.get(cacheKey);
  if (cached !== undefined) return cached;
  let unavailable = false;
  let lastReason = 'issuer not accepted';
  let peeked: PeekedToken | undefined;
  let candidates: readonly Provider[] | undefined;
  if (isOpaqueToken(token)) {
    // Not a JWT: only its provider can tell, by introspection (tokens/introspection.ts).
    lastReason = 'not a JWT, and no provider introspects opaque tokens';
    ({ providers: candidates, unavailable } = await introspectingProviders(context.providers.values()));
  } else {
    try {
      peeked = peekToken(token);
    } catch (error) {
      return refuseToken(context, request, (error as InvalidTokenError).reason);
    }
    const issuer = peeked.claims.iss;
    if (typeof issuer !== 'string') return refuseToken(context, request, 'no issuer');
    // Which providers accept this issuer: learned on first sight (several may share one issuer).
    candidates = context.bearerIssuers.get(issuer);
    if (candidates === undefined) {
      const accepting: Provider[] = [];
      for (const provider of context.providers.values()) {
        try {
          if (provider.bearer !== undefined && (await provider.bearer.acceptsIssuer(issuer))) accepting.push(provider);
        } catch (error) {
          if (!(error instanceof ProviderUnavailableError)) throw error;
          unavailable = true;
        }
      }
      if (!unavailable && accepting.length > 0) rememberIssuer(context, issuer, accepting);
      candidates = accepting;
    }
  }
  for (const provider of candidates) {
    try {
      const signIn = await (peeked === undefined
        ? provider.bearer!.introspect!(token)
        : provider.bearer!.validate(token, peeked));
      if (lacksUserId(signIn)) return refuseToken(context, request, 'no subject: the token names no user');
      const unsendable = unsendableHeaderValue(signIn);
      if (unsendable !== undefined) return refuseToken(context, request, `${unsendable} holds a control character`);
      const identity = identityOf(provider, signIn, context.config.tokenStore.enabled);
      const holder: BearerCaller = { identity, caller: callerOf(identity, signIn.access) };
      context.bearerCache.set(cacheKey, token.length, holder, signIn.expiresAt);
      return holder;
    } catch (error) {
      if (error instanceof TokenForbiddenError) {
        context.logger.warn(
          { provider: provider.alias, reason: error.reason, path: request.view.path },
          'bearer token forbidden',
        );
        return {
          decision: jsonDecision(403, {
            error: 'forbidden',
            error_description: 'The token is valid but not allowed here.',
          }),
        };
      }
      if (error instanceof InvalidTokenError) lastReason = error.reason;
      else if (error instanceof ProviderUnavailableError) unavailable = true;
      else throw error;
    }
  }
  if (unavailable) {
    context.logger.error(
      { reason: 'provider keys or metadata unavailable', path: request.view.path },
      'bearer token not checkable',
    );
    return {
      decision: jsonDecision(
        503,
        {
          error: 'temporarily_unavailable',
          error_description: 'The identity provider could not be reached to check the token.',
        },
        { headers: { 'Retry-After': '5' } },
      ),
    };
  }
  return refuseToken(context, request, lastReason);
}

function refuseToken(context: LayerContext, request: RouteRequest, reason: string): { decision: Decision } {
  context.logger.info({ reason: `bearer token ${reason}`, path: request.view.path }, 'request challenged');
  return { decision: invalidTokenDecision(reason) };
}

function rememberIssuer(context: LayerContext, issuer: string, providers: readonly Provider[]): void {
  context.bearerIssuers.set(issuer, providers);
}

function identityOf(provider: Provider, signIn: SignIn, exposeTokens: boolean): Identity {
  const identity: { -readonly [K in keyof Identity]: Identity[K] } = {
    provider: provider.alias,
    userId: signIn.userId,
    userName: signIn.userName,
    authType: provider.alias,
    nameType: signIn.nameType,
    roleType: signIn.roleType,
    claims: signIn.claims,
  };
  // Assigned rather than spread into the literal: this runs for every validated token.
  if (exposeTokens)
    identity.tokens = signIn.tokens.accessToken !== undefined ? { accessToken: signIn.tokens.accessToken } : {};
  return identity;
}

const EXCHANGE_FIELDS: ReadonlyArray<[string, keyof TokenExchange]> = [
  ['access_token', 'accessToken'],
  ['access_token_secret', 'accessTokenSecret'],
  ['id_token', 'idToken'],
  ['authorization_code', 'authorizationCode'],
  ['redirect_uri', 'redirectUri'],
  ['code_verifier', 'codeVerifier'],
];

/** A malformed exchange request: the status and the message the caller gets. */
interface MalformedExchange {
  readonly status: number;
  readonly error: string;
  readonly headers?: Readonly<Record<string, string>>;
}

async function exchangeRequest(request: RouteRequest): Promise<{ exchange: TokenExchange } | MalformedExchange> {
  if (mediaType(request.view) !== 'application/json')
    return { status: 415, error: 'Send the provider token as JSON (Content-Type: application/json).' };
  const read = await readBoundedBody(request.view, MAX_AUTH_BODY_BYTES);
  if (!('body' in read))
    return { status: read.status, error: asSentence(read.reason), ...(read.headers ? { headers: read.headers } : {}) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.body.toString('utf8'));
  } catch {
    return { status: 400, error: 'The body is not valid JSON.' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { status: 400, error: 'The body must be a JSON object.' };
  const out: Record<string, string> = {};
  for (const [wire, field] of EXCHANGE_FIELDS) {
    const value = (parsed as Record<string, unknown>)[wire];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value === '' || value.length > MAX_TOKEN_LENGTH)
      return { status: 400, error: `"${wire}" must be a non-empty string of at most ${MAX_TOKEN_LENGTH} characters.` };
    out[field] = value;
  }
  if (out.accessToken === undefined && out.idToken === undefined && out.authorizationCode === undefined) {
    return { status: 400, error: 'Expected "access_token", "id_token" or "authorization_code".' };
  }
  return { exchange: out as TokenExchange };
}

/** POST /.auth/login/<provider>: a provider token in, an authentication token (and a session) out. */
export async function exchangeToken(
  context: LayerContext,
  request: RouteRequest,
  provider: Provider,
): Promise<Decision> {
  const parsed = await exchangeRequest(request);
  if (!('exchange' in parsed)) {
    // The message is the reason: it names fields and limits, never what the client sent.
    context.logger.info(
      { provider: provider.alias, reason: parsed.error, path: request.view.path },
      'token exchange refused',
    );
    return jsonDecision(parsed.status, { error: parsed.error }, parsed.headers ? { headers: parsed.headers } : {});
  }
  let signIn: SignIn;
  try {
    signIn = await provider.exchange(parsed.exchange);
  } catch (error) {
    if (error instanceof TokenForbiddenError) {
      context.logger.warn({ provider: provider.alias, reason: error.reason }, 'token exchange forbidden');
      return jsonDecision(403, { error: 'This account or application is not allowed to sign in.' });
    }
    if (error instanceof ProviderRefusedError) {
      context.logger.warn({ provider: provider.alias, reason: error.message }, 'token exchange refused');
      if (error.oauthError === 'invalid_request') return jsonDecision(400, { error: error.message });
      if (error.oauthError === 'unsupported_token_type')
        return invalidTokenDecision('the access token is not a JWT; send the id_token instead');
      return invalidTokenDecision('the provider token is not valid');
    }
    if (error instanceof ProviderUnavailableError) {
      context.logger.error({ provider: provider.alias, reason: error.message }, 'identity provider unavailable');
      return jsonDecision(502, { error: 'The identity provider could not be reached.' });
    }
    throw error;
  }
  if (lacksUserId(signIn)) {
    context.logger.warn({ provider: provider.alias, reason: 'no user id' }, 'token exchange refused');
    return invalidTokenDecision('the provider token names no user');
  }
  const unsendable = unsendableHeaderValue(signIn);
  if (unsendable !== undefined) {
    context.logger.warn(
      { provider: provider.alias, reason: `${unsendable} holds a control character` },
      'token exchange refused',
    );
    return invalidTokenDecision(`the ${unsendable} holds a control character: it cannot be passed on as a header`);
  }
  const made = sessionRecord(context, provider, signIn, request.origin.host);
  const { id, session: record } = await context.exchangedSessions.session(
    ExchangedSessions.key(provider.alias, request.origin.host, parsed.exchange),
    (known) => usableExchangedSession(context, known, made, request.origin.host),
    async () => ({ id: await context.sessions.create(made), session: made }),
  );
  const authenticationToken = await context.authTokens.issue(id, {
    userId: record.userId,
    provider: provider.alias,
    expiresAt: record.expiresAt,
  });
  context.logger.info({ provider: provider.alias, path: request.view.path }, 'signed in (token exchange)');
  return jsonDecision(200, { authenticationToken, user: { userId: record.userId } });
}

/**
 * The session an earlier exchange of the same token made, if it still is one a request could use: not
 * signed out or expired, and still this user's with today's provider configuration.
 */
async function usableExchangedSession(
  context: LayerContext,
  id: string,
  made: SessionRecord,
  host: string,
): Promise<SessionRecord | undefined> {
  // A store that cannot be read now is no reason to refuse the exchange: a new session is made (or fails to be, clearly).
  const record = await context.sessions.load(id).catch(() => undefined);
  if (record === undefined || record.provider !== made.provider || record.userId !== made.userId) return undefined;
  return context.sessions.assess(record, host).kind === 'reauth' ? undefined : record;
}
