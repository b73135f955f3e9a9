// Server-directed sign-in: /.auth/login/<provider> and its callback.
import * as oidc from 'openid-client';

import { seal, unseal } from '../crypto/sealed.js';
import { originUrl } from '../http/origin.js';
import { headerValue, requestCookie, type Decision } from '../http/request-view.js';
import { errorDecision, redirectDecision, setCookie } from '../http/responses.js';
import { ProviderUnavailableError, type OidcProviderClient } from '../oidc/provider-client.js';
import { claimList, userNameFrom } from '../principal.js';
import { validateReturnUrl } from '../return-url.js';
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
}

/** The cookie outlives the nonce window so an expired transaction can restart instead of failing. */
const TRANSACTION_COOKIE_GRACE_MS = 60 * 60_000;
const MAX_CALLBACK_BODY = 64 * 1024;

export const DEFAULT_LOGIN_DONE = '/.auth/login/done';

function transactionCookieName(context: LayerContext): string {
  return `${context.config.sessionCookieName}Login`;
}

function callbackPath(context: LayerContext, alias: string): string {
  return `${context.config.apiPrefix}/login/${alias}/callback`;
}

function transactionCookie(context: LayerContext, alias: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return setCookie({ name: transactionCookieName(context), value, path: `${context.config.apiPrefix}/login/${alias}`, secure, maxAgeSeconds });
}

export function returnUrlParameter(params: URLSearchParams, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = params.get(name);
    if (value !== null) return value;
  }
  return undefined;
}

function unavailable(context: LayerContext, request: RouteRequest, alias: string, error: unknown): Decision {
  context.logger.error({ provider: alias, reason: (error as Error).message, path: request.view.path }, 'identity provider unavailable');
  return errorDecision(502, 'Sign-in is unavailable', 'The identity provider could not be reached. Please try again in a moment.', request.json);
}

export async function startLogin(context: LayerContext, request: RouteRequest, client: OidcProviderClient, returnUrlRaw: string | undefined): Promise<Decision> {
  const defaultReturn = `${context.config.apiPrefix}/login/done`;
  const verdict = validateReturnUrl(returnUrlRaw ?? defaultReturn, context.config.allowedExternalRedirectUrls, context.config.apiPrefix);
  if (!verdict.ok) {
    context.logger.warn({ reason: `return URL refused (${verdict.reason})`, path: request.view.path }, 'login refused');
    return errorDecision(400, 'Invalid return address', 'The post-login redirect address is not allowed.', request.json);
  }
  const transaction: LoginTransaction = {
    p: client.alias,
    s: oidc.randomState(),
    n: oidc.randomNonce(),
    v: oidc.randomPKCECodeVerifier(),
    r: verdict.location,
    t: context.now(),
    h: request.origin.host,
  };
  let url: URL;
  try {
    url = await client.authorizationUrl({
      redirectUri: `${originUrl(request.origin)}${callbackPath(context, client.alias)}`,
      state: transaction.s,
      nonce: transaction.n,
      codeVerifier: transaction.v,
    });
  } catch (error) {
    return unavailable(context, request, client.alias, error);
  }
  const lifetime = context.config.nonce.lifetimeMs + TRANSACTION_COOKIE_GRACE_MS;
  const sealed = seal(context.transactionKey, `login:${client.alias}`, transaction, context.now() + lifetime);
  return redirectDecision(url.href, { cookies: [transactionCookie(context, client.alias, sealed, Math.floor(lifetime / 1000), request.secure)] });
}

async function callbackParameters(request: RouteRequest): Promise<URLSearchParams | Decision> {
  if (request.view.method === 'GET') return request.searchParams;
  const type = (headerValue(request.view, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    return errorDecision(415, 'Sign-in failed', 'The callback must be a GET or a form POST.', request.json);
  }
  try {
    return new URLSearchParams((await request.view.readBody(MAX_CALLBACK_BODY)).toString('utf8'));
  } catch {
    return errorDecision(413, 'Sign-in failed', 'The callback body is too large.', request.json);
  }
}

export async function finishLogin(context: LayerContext, request: RouteRequest, client: OidcProviderClient): Promise<Decision> {
  const alias = client.alias;
  const clearTransaction = transactionCookie(context, alias, '', 0, request.secure);
  const refuse = (status: number, reason: string, message: string): Decision => {
    context.logger.warn({ provider: alias, reason, path: request.view.path }, 'sign-in callback refused');
    return errorDecision(status, 'Sign-in failed', message, request.json, { cookies: [clearTransaction] });
  };

  const params = await callbackParameters(request);
  if (!(params instanceof URLSearchParams)) return params;

  const sealed = requestCookie(request.view, transactionCookieName(context));
  if (sealed === undefined) {
    return refuse(400, 'no login transaction cookie', 'This sign-in was not started here, or your browser did not keep its cookie. Please start again.');
  }
  const opened = unseal<LoginTransaction>(context.transactionKey, `login:${alias}`, sealed, context.now());
  if (!opened.ok) {
    if (opened.reason === 'expired') return redirectDecision(`${context.config.apiPrefix}/login/${alias}`, { cookies: [clearTransaction] });
    return refuse(400, `login transaction ${opened.reason}`, 'The sign-in state is invalid. Please start again.');
  }
  const transaction = opened.value;
  if (context.now() - transaction.t > context.config.nonce.lifetimeMs) {
    // Took too long: start over cleanly, keeping where the user wanted to go.
    context.logger.info({ provider: alias, path: request.view.path }, 'login transaction expired; restarting sign-in');
    return redirectDecision(`${context.config.apiPrefix}/login/${alias}?post_login_redirect_uri=${encodeURIComponent(transaction.r)}`, { cookies: [clearTransaction] });
  }
  if (transaction.p !== alias) return refuse(400, 'transaction for another provider', 'The sign-in state does not match this provider.');
  if (transaction.h !== request.origin.host) return refuse(400, 'callback host mismatch', 'The sign-in finished on another host than it started on.');

  const providerError = params.get('error');
  if (providerError !== null) {
    return refuse(401, `provider error ${providerError}`, `The identity provider did not sign you in (${providerError}).`);
  }
  if (params.get('state') !== transaction.s) return refuse(400, 'state mismatch', 'The sign-in state does not match. Please start again.');
  if (params.get('code') === null) return refuse(400, 'no authorization code', 'The identity provider returned no authorization code.');

  const redirectUri = `${originUrl(request.origin)}${callbackPath(context, alias)}`;
  const callbackUrl = new URL(redirectUri);
  for (const [k, v] of params) callbackUrl.searchParams.append(k, v);
  let tokens;
  try {
    tokens = await client.redeem(callbackUrl, {
      redirectUri,
      state: transaction.s,
      nonce: context.config.nonce.validate ? transaction.n : undefined,
      codeVerifier: transaction.v,
    });
  } catch (error) {
    if (error instanceof ProviderUnavailableError) return unavailable(context, request, alias, error);
    return refuse(401, (error as Error).message, 'The identity provider response could not be verified. Please sign in again.');
  }
  const claims = tokens.claims ?? {};
  const subject = typeof claims.sub === 'string' ? claims.sub : '';
  const now = context.now();
  const name = userNameFrom(claims, client.config.nameClaimType);
  const idTokenExpiry = typeof claims.exp === 'number' ? claims.exp * 1000 : undefined;
  const expiresAt =
    context.config.cookieExpiration.convention === 'IdentityProviderDerived' && idTokenExpiry !== undefined ? idTokenExpiry : now + context.config.cookieExpiration.lifetimeMs;
  const record: SessionRecord = {
    app: context.config.app,
    provider: alias,
    userId: subject,
    userName: name.name,
    nameType: name.type,
    roleType: 'roles',
    claims: claimList(claims),
    tokens: {
      ...(tokens.accessToken !== undefined ? { accessToken: tokens.accessToken } : {}),
      ...(tokens.idToken !== undefined ? { idToken: tokens.idToken } : {}),
      ...(tokens.refreshToken !== undefined ? { refreshToken: tokens.refreshToken } : {}),
      ...(tokens.accessTokenExpiresAt !== undefined ? { accessTokenExpiresAt: tokens.accessTokenExpiresAt } : {}),
    },
    createdAt: now,
    expiresAt,
    configFingerprint: client.config.fingerprint,
    host: request.origin.host,
  };
  // Rotate: a session id the browser held before signing in is never promoted.
  const previous = context.sessions.idFromRequest(request.view);
  if (previous !== null) await context.sessions.destroy(previous);
  const id = await context.sessions.create(record);
  context.logger.info({ provider: alias, path: request.view.path }, 'signed in');
  return redirectDecision(transaction.r, { cookies: [context.sessions.cookie(id, request.secure, record), clearTransaction] });
}
