// Server-directed sign-in: /.auth/login/<provider> and its callback.
import { createHash } from 'node:crypto';

import * as oidc from 'openid-client';

import { seal, unseal } from '../crypto/sealed.js';
import { isLoopbackHost, originUrl } from '../http/origin.js';
import {
  asSentence,
  MAX_AUTH_BODY_BYTES,
  mediaType,
  readBoundedBody,
  requestCookie,
  requestCookiesByPrefix,
  type Decision,
} from '../http/request-view.js';
import { errorDecision, nameRequiresSecure, redirectDecision, setCookie, type PageLink } from '../http/responses.js';
import { lacksUserId, unsendableHeaderValue } from '../identity.js';
import { secondsSince } from '../auth-metrics.js';
import { ProviderRefusedError, ProviderUnavailableError } from '../providers/errors.js';
import { loggableErrorCode, shownErrorCode } from '../providers/oauth-error-code.js';
import { ACCOUNT_PROMPTS, type AccountPrompt, type Provider, type SignIn } from '../providers/provider.js';
import { TokenForbiddenError } from '../tokens/errors.js';
import { validateReturnUrl } from '../return-url.js';
import { sessionExpiresAt } from '../session/lifetime.js';
import type { SessionRecord } from '../session/record.js';
import type { LayerContext, RouteRequest } from './context.js';

/** The sealed login transaction: travels with the browser so any instance can finish the login. */
interface LoginTransaction {
  readonly p: string; // provider alias
  readonly s: string; // state
  readonly n: string; // nonce
  readonly v: string; // PKCE verifier
  readonly r: string; // validated return URL
  readonly t: number; // started at (ms)
  readonly h: string; // host the login started on
  readonly x?: Readonly<Record<string, string>>; // provider's own per-login values (OAuth 1.0a request token)
}

/** The cookie outlives the nonce window so an expired transaction can restart instead of failing. */
const TRANSACTION_COOKIE_GRACE_MS = 60 * 60_000;
/**
 * Sign-ins with one provider a browser may have under way at once (tabs that were all sent to
 * sign in). Each has its own cookie; starting one more drops the oldest, so the cookies a
 * browser sends stay small.
 */
export const MAX_PENDING_LOGINS = 4;

function transactionCookiePrefix(context: LayerContext): string {
  // A __Host- cookie must have Path=/, and these live on the login path: they take __Secure- instead.
  return `${context.config.sessionCookieName.replace(/^__host-/i, '__Secure-')}Login_`;
}

/**
 * One cookie per login, named after what its callback will carry (the state), so a second
 * sign-in does not overwrite the first. A digest: the same short, cookie-safe name whatever
 * the provider's value looks like.
 */
function transactionCookieName(context: LayerContext, correlation: string): string {
  return transactionCookiePrefix(context) + createHash('sha256').update(correlation).digest('base64url').slice(0, 16);
}

/** Bound to provider and cookie name: a transaction opens only where it was sealed. */
function transactionLabel(alias: string, cookieName: string): string {
  return `login:${alias}:${cookieName}`;
}

function callbackPath(context: LayerContext, alias: string): string {
  return `${loginPath(context.config.apiPrefix, alias)}/callback`;
}

/**
 * The login transaction cookie. A provider that POSTs the callback from its own site
 * (form_post) needs SameSite=None (https only) to get it back; over plain http the
 * attribute is left out (the browser's default lets a top-level POST carry it briefly).
 */
function transactionCookie(
  context: LayerContext,
  provider: Provider,
  name: string,
  value: string,
  maxAgeSeconds: number,
  secure: boolean,
): string {
  const sameSite =
    provider.responseMode === 'form_post' ? (secure || nameRequiresSecure(name) ? 'None' : 'Unset') : 'Lax';
  return setCookie({
    name,
    value,
    path: loginPath(context.config.apiPrefix, provider.alias),
    secure,
    maxAgeSeconds,
    sameSite,
  });
}

/**
 * Clearing cookies for the pending logins a new one displaces: past MAX_PENDING_LOGINS, the
 * oldest go, unreadable or expired ones first. (The login path is the cookies' path, so the
 * browser sends exactly this provider's pending logins here.)
 */
function displacedLogins(context: LayerContext, request: RouteRequest, provider: Provider): string[] {
  const pending = requestCookiesByPrefix(request.view, transactionCookiePrefix(context));
  const excess = pending.length - (MAX_PENDING_LOGINS - 1);
  if (excess <= 0) return [];
  const now = context.now();
  const byAge = pending
    .map(({ name, value }) => {
      const opened = unseal<LoginTransaction>(
        context.transactionKey,
        transactionLabel(provider.alias, name),
        value,
        now,
      );
      return { name, startedAt: opened.ok ? opened.value.t : Number.NEGATIVE_INFINITY };
    })
    .sort((a, b) => a.startedAt - b.startedAt);
  return byAge.slice(0, excess).map(({ name }) => transactionCookie(context, provider, name, '', 0, request.secure));
}

export function returnUrlParameter(params: URLSearchParams, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = params.get(name);
    if (value !== null) return value;
  }
  return undefined;
}

/**
 * The way on from a sign-in that failed or was refused: a link that starts a new one, to where the
 * failed one was going (`returnTo`: a return URL validated when that sign-in started, when one is
 * known). A person on such a page otherwise has nowhere to go but the address bar, and nothing
 * there says where sign-in starts. A link, never an automatic restart: a sign-in that fails every
 * time (a browser that keeps no cookies, an account the policy refuses) must not become a loop.
 */
function signInAgain(
  context: LayerContext,
  alias: string,
  text: string,
  returnTo?: string,
  prompt?: AccountPrompt,
): PageLink {
  return {
    href: loginPath(
      context.config.apiPrefix,
      alias,
      returnTo === loginDonePath(context) ? undefined : returnTo,
      prompt,
    ),
    text,
  };
}

/**
 * Where a sign-in with `alias` starts; it comes back to `returnTo` when given (the login route validates it), else to the
 * done page; `prompt` asks the provider to let the person choose the account.
 */
export function loginPath(apiPrefix: string, alias: string, returnTo?: string, prompt?: AccountPrompt): string {
  const query = [
    ...(returnTo !== undefined ? [`post_login_redirect_uri=${encodeURIComponent(returnTo)}`] : []),
    ...(prompt !== undefined ? [`prompt=${prompt}`] : []),
  ];
  const start = `${apiPrefix}/login/${alias}`;
  return query.length === 0 ? start : `${start}?${query.join('&')}`;
}

/** Where a sign-in lands unless it asks for (and is allowed) another address. */
function loginDonePath(context: LayerContext): string {
  return `${context.config.apiPrefix}/login/done`;
}

function unavailable(
  context: LayerContext,
  request: RouteRequest,
  alias: string,
  error: unknown,
  returnTo: string | undefined,
): Decision {
  context.logger.error(
    { provider: alias, reason: (error as Error).message, path: request.view.path },
    'identity provider unavailable',
  );
  return errorDecision(
    502,
    'Sign-in is unavailable',
    'The identity provider could not be reached. Please try again in a moment.',
    request.json,
    {},
    [signInAgain(context, alias, 'Try again', returnTo)],
  );
}

export async function startLogin(
  context: LayerContext,
  request: RouteRequest,
  provider: Provider,
  returnUrlRaw: string | undefined,
): Promise<Decision> {
  const verdict = validateReturnUrl(
    returnUrlRaw ?? loginDonePath(context),
    context.config.allowedExternalRedirectUrls,
    context.config.apiPrefix,
  );
  if (!verdict.ok) {
    context.logger.warn({ reason: `return URL refused (${verdict.reason})`, path: request.view.path }, 'login refused');
    // Refused rather than replaced (nobody lands somewhere they did not ask for), with a way to sign in all the same.
    return errorDecision(
      400,
      'Invalid return address',
      'The post-login redirect address is not allowed.',
      request.json,
      {},
      [signInAgain(context, provider.alias, 'Sign in')],
    );
  }
  const prompt = request.searchParams.get('prompt') || null; // empty: none asked for
  if (prompt !== null && !(ACCOUNT_PROMPTS as readonly string[]).includes(prompt)) {
    // Not the value: it is the link's, anyone's to write.
    context.logger.warn({ reason: 'prompt refused', path: request.view.path }, 'login refused');
    return errorDecision(
      400,
      'Invalid prompt',
      `The prompt must be ${ACCOUNT_PROMPTS.join(' or ')}.`,
      request.json,
      {},
      [signInAgain(context, provider.alias, 'Sign in', verdict.location)],
    );
  }
  const cookieName = context.sessionCookie.name;
  if (context.sessionCookie.requiresHttps && request.origin.scheme === 'http' && !isLoopbackHost(request.origin.host)) {
    // The browser would drop the login cookie and then the session cookie: the sign-in could only end at the
    // callback with "this sign-in was not started here". Said here instead, where the cause is known.
    context.logger.error(
      {
        reason: `the session cookie name ${cookieName} needs https, and this request came over http (behind a TLS terminator, set httpSettings.forwardProxy)`,
        path: request.view.path,
      },
      'login refused',
    );
    return errorDecision(
      500,
      'Sign-in needs https',
      'This site can sign you in over https only. Please open it with https://.',
      request.json,
    );
  }
  const started = {
    p: provider.alias,
    s: oidc.randomState(),
    n: oidc.randomNonce(),
    v: oidc.randomPKCECodeVerifier(),
    r: verdict.location,
    t: context.now(),
    h: request.origin.host,
  };
  let begun;
  try {
    begun = await provider.begin({
      redirectUri: `${originUrl(request.origin)}${callbackPath(context, provider.alias)}`,
      state: started.s,
      nonce: started.n,
      codeVerifier: started.v,
      ...(prompt !== null ? { prompt: prompt as AccountPrompt } : {}),
    });
  } catch (error) {
    if (error instanceof ProviderRefusedError) {
      context.logger.error(
        { provider: provider.alias, reason: error.message },
        'identity provider refused to start a sign-in',
      );
      return errorDecision(
        502,
        'Sign-in is unavailable',
        'The identity provider refused to start the sign-in. Please try again later.',
        request.json,
        {},
        [signInAgain(context, provider.alias, 'Try again', verdict.location)],
      );
    }
    return unavailable(context, request, provider.alias, error, verdict.location);
  }
  const transaction: LoginTransaction = { ...started, ...(begun.saved ? { x: begun.saved } : {}) };
  const lifetime = context.config.nonce.lifetimeMs + TRANSACTION_COOKIE_GRACE_MS;
  const name = transactionCookieName(context, begun.correlation ?? started.s);
  const sealed = seal(
    context.transactionKey,
    transactionLabel(provider.alias, name),
    transaction,
    context.now() + lifetime,
  );
  const cookie = transactionCookie(context, provider, name, sealed, Math.floor(lifetime / 1000), request.secure);
  return redirectDecision(begun.url.href, { cookies: [...displacedLogins(context, request, provider), cookie] });
}

interface Refusal {
  readonly status: number;
  readonly reason: string;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

async function callbackParameters(request: RouteRequest): Promise<URLSearchParams | Refusal> {
  if (request.view.method === 'GET') return request.searchParams;
  if (mediaType(request.view) !== 'application/x-www-form-urlencoded') {
    return {
      status: 415,
      reason: 'callback POST is not a form',
      message: 'The callback must be a GET or a form POST.',
    };
  }
  const read = await readBoundedBody(request.view, MAX_AUTH_BODY_BYTES);
  if ('body' in read) return new URLSearchParams(read.body.toString('utf8'));
  return {
    status: read.status,
    reason: `callback: ${read.reason}`,
    message: asSentence(read.reason),
    ...(read.headers ? { headers: read.headers } : {}),
  };
}

export async function finishLogin(context: LayerContext, request: RouteRequest, provider: Provider): Promise<Decision> {
  const alias = provider.alias;
  let clearTransaction: readonly string[] = []; // once the callback has named its login
  let returnTo: string | undefined; // once its login has opened: where it was going
  const again = () => [signInAgain(context, alias, 'Sign in again', returnTo)];
  const refuse = (
    status: number,
    reason: string,
    message: string,
    headers?: Readonly<Record<string, string>>,
    links = again(),
  ): Decision => {
    context.logger.warn({ provider: alias, reason, path: request.view.path }, 'sign-in callback refused');
    context.metrics.signIn(alias, 'refused');
    return errorDecision(
      status,
      'Sign-in failed',
      message,
      request.json,
      { cookies: clearTransaction, ...(headers ? { headers } : {}) },
      links,
    );
  };
  // The callback's `error` is whatever the link said: logged bounded, named on the page only when registered.
  const refuseProviderError = (code: string, note: string): Decision => {
    const shown = shownErrorCode(code);
    return refuse(
      401,
      `provider error ${loggableErrorCode(code)}${note}`,
      `The identity provider did not sign you in${shown ? ` (${shown})` : ''}.`,
    );
  };

  const params = await callbackParameters(request);
  if (!(params instanceof URLSearchParams)) return refuse(params.status, params.reason, params.message, params.headers);

  const correlation = provider.callbackCorrelation
    ? provider.callbackCorrelation(params)
    : params.get('state') || undefined;
  if (correlation === undefined) {
    const providerError = params.get('error');
    if (providerError !== null) return refuseProviderError(providerError, ' (no state)');
    return refuse(400, 'callback without state', 'The sign-in answer is incomplete. Please start again.');
  }
  const name = transactionCookieName(context, correlation);
  clearTransaction = [transactionCookie(context, provider, name, '', 0, request.secure)];
  const sealed = requestCookie(request.view, name);
  if (sealed === undefined) {
    return refuse(
      400,
      'no login transaction cookie for this state',
      'This sign-in was not started here, or your browser did not keep its cookie. Please start again.',
    );
  }
  const opened = unseal<LoginTransaction>(context.transactionKey, transactionLabel(alias, name), sealed, context.now());
  if (!opened.ok) {
    if (opened.reason === 'expired')
      return redirectDecision(loginPath(context.config.apiPrefix, alias), { cookies: clearTransaction });
    return refuse(400, `login transaction ${opened.reason}`, 'The sign-in state is invalid. Please start again.');
  }
  const transaction = opened.value;
  returnTo = transaction.r;
  if (context.now() - transaction.t > context.config.nonce.lifetimeMs) {
    // Took too long: start over cleanly, keeping where the user wanted to go. Not an account prompt it asked for:
    // the person has just chosen the account at the provider, whose session now answers the restart with it.
    context.logger.info({ provider: alias, path: request.view.path }, 'login transaction expired; restarting sign-in');
    return redirectDecision(loginPath(context.config.apiPrefix, alias, transaction.r), { cookies: clearTransaction });
  }
  if (transaction.p !== alias)
    return refuse(400, 'transaction for another provider', 'The sign-in state does not match this provider.');
  if (transaction.h !== request.origin.host)
    return refuse(400, 'callback host mismatch', 'The sign-in finished on another host than it started on.');

  const providerError = params.get('error');
  if (providerError !== null) return refuseProviderError(providerError, '');

  const redirectUri = `${originUrl(request.origin)}${callbackPath(context, alias)}`;
  let signIn: SignIn;
  const started = performance.now();
  try {
    signIn = await provider.complete({
      params,
      redirectUri,
      state: transaction.s,
      nonce: transaction.n,
      expectedNonce: context.config.nonce.validate ? transaction.n : undefined,
      codeVerifier: transaction.v,
      saved: transaction.x ?? {},
    });
  } catch (error) {
    context.metrics.providerCall(alias, 'sign_in', secondsSince(started));
    if (error instanceof ProviderUnavailableError) {
      context.metrics.signIn(alias, 'unavailable');
      return unavailable(context, request, alias, error, returnTo);
    }
    if (error instanceof TokenForbiddenError) {
      // Signing in again plainly would bring the same account back from the provider's own session.
      return refuse(403, error.message, 'Your account is not allowed to sign in to this application.', undefined, [
        signInAgain(context, alias, 'Sign in with another account', returnTo, 'select_account'),
      ]);
    }
    if (error instanceof ProviderRefusedError) {
      if (error.oauthError === 'invalid_state')
        return refuse(400, error.message, 'The sign-in state does not match. Please start again.');
      if (error.oauthError === 'invalid_request')
        return refuse(400, error.message, 'The identity provider returned an incomplete answer. Please start again.');
      return refuse(401, error.message, 'The identity provider response could not be verified. Please sign in again.');
    }
    context.logger.error(
      { provider: alias, reason: (error as Error).message, path: request.view.path },
      'sign-in failed unexpectedly',
    );
    context.metrics.signIn(alias, 'error');
    return errorDecision(
      500,
      'Sign-in failed',
      'Something went wrong while signing you in. Please try again.',
      request.json,
      { cookies: clearTransaction },
      again(),
    );
  }
  context.metrics.providerCall(alias, 'sign_in', secondsSince(started));
  if (lacksUserId(signIn))
    return refuse(
      502,
      "the provider's answer names no user",
      'The identity provider sent an answer that names no user.',
    );
  const unsendable = unsendableHeaderValue(signIn);
  if (unsendable !== undefined) {
    return refuse(
      502,
      `the provider's ${unsendable} holds a control character`,
      'The identity provider sent an answer that cannot be passed on to the application.',
    );
  }
  const record = sessionRecord(context, provider, signIn, request.origin.host);
  // Rotate: a session id the browser held before signing in is never promoted.
  const previous = context.sessionCookie.read(request.view);
  if (previous.state === 'valid') await context.sessions.destroy(previous.id);
  const id = await context.sessions.create(record);
  context.logger.info({ provider: alias, path: request.view.path }, 'signed in');
  context.metrics.signIn(alias, 'success');
  return redirectDecision(transaction.r, {
    cookies: [context.sessionCookie.set(id, record.expiresAt, request.secure), ...clearTransaction],
  });
}

/** The session a sign-in establishes; its lifetime per the cookieExpiration convention. */
export function sessionRecord(context: LayerContext, provider: Provider, signIn: SignIn, host: string): SessionRecord {
  const now = context.now();
  const expiresAt = sessionExpiresAt(context.config.cookieExpiration, now, signIn.assertionExpiresAt);
  return {
    app: context.config.app,
    provider: provider.alias,
    userId: signIn.userId,
    userName: signIn.userName,
    nameType: signIn.nameType,
    roleType: signIn.roleType,
    claims: signIn.claims,
    tokens: signIn.tokens,
    createdAt: now,
    expiresAt,
    configFingerprint: provider.fingerprint,
    host,
    ...(signIn.providerSession !== undefined ? { providerSession: signIn.providerSession } : {}),
    ...(signIn.access !== undefined ? { access: signIn.access } : {}),
  };
}
