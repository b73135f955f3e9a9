// Server-directed sign-in: /.auth/login/<provider>, where it starts (its callback: login-callback.ts).
import * as oidc from 'openid-client';

import { seal } from '../crypto/sealed.js';
import { type Decision, isLoopbackHost, originUrl, type RouteRequest } from '../http/request-view.js';
import { errorDecision, redirectDecision } from '../http/responses.js';
import { ProviderRefusedError } from '../providers/errors.js';
import { ACCOUNT_PROMPTS, type AccountPrompt, type Provider, type SignIn } from '../providers/provider.js';
import { validateReturnUrl } from '../return-url.js';
import { sessionExpiresAt } from '../session/lifetime.js';
import type { SessionRecord } from '../session/record.js';
import type { LayerContext } from './context.js';
import { callbackPath, loginDonePath, signInAgain } from './login-paths.js';
import {
  displacedLogins,
  transactionCookie,
  transactionCookieName,
  transactionLabel,
  TRANSACTION_COOKIE_GRACE_MS,
  type LoginTransaction,
} from './login-transaction.js';

/** A sign-in the provider could not be reached for: 502, logged, with a link to try again. */
export function providerUnavailable(
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
    return providerUnavailable(context, request, provider.alias, error, verdict.location);
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
