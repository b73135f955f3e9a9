// /.auth/me, /.auth/refresh, /.auth/logout and the small pages.
import { callerOf } from '../authorization/record-caller.js';
import { seal, unseal } from '../crypto/sealed.js';
import { type Decision, originUrl, type RouteRequest } from '../http/request-view.js';
import { jsonDecision, linksParagraph, pageDecision, redirectDecision } from '../http/responses.js';
import { validateReturnUrl } from '../return-url.js';
import type { SessionRecord } from '../session/record.js';
import { currentSession, namedSessionOrNone, type LayerContext } from './context.js';
import { returnUrlParameter } from './login-paths.js';

const LOGOUT_STATE_LIFETIME_MS = 10 * 60_000;

function meEntry(context: LayerContext, record: SessionRecord): Record<string, unknown> {
  const tokens = context.config.tokenStore.enabled ? record.tokens : {};
  // The groups and roles authorization rules judge this session by (gatehouse's own fields).
  const { access } = callerOf(record, record.access);
  return {
    provider_name: record.provider,
    user_id: record.userId,
    user_claims: record.claims,
    user_groups: access.groups,
    user_roles: access.roles,
    ...(access.groupsIncomplete !== undefined ? { user_groups_incomplete: access.groupsIncomplete } : {}),
    access_token: tokens.accessToken ?? '',
    expires_on: tokens.accessTokenExpiresAt !== undefined ? new Date(tokens.accessTokenExpiresAt).toISOString() : '',
    id_token: tokens.idToken ?? '',
    ...(tokens.refreshToken !== undefined ? { refresh_token: tokens.refreshToken } : {}),
  };
}

const NOT_SIGNED_IN = { error: 'Not signed in.' };

/** A 401 from an account endpoint, logged like every request gatehouse refuses. */
function notSignedIn(context: LayerContext, request: RouteRequest): Decision {
  context.logger.info({ reason: 'not signed in', path: request.view.path }, 'request refused');
  return jsonDecision(401, NOT_SIGNED_IN);
}

export async function me(context: LayerContext, request: RouteRequest): Promise<Decision> {
  const session = await currentSession(context, request);
  if (session === undefined) return notSignedIn(context, request);
  return jsonDecision(200, [meEntry(context, session.record)]);
}

/**
 * A session that may be refreshed: live, or (tokenRefreshExtensionHours) ended by
 * its lifetime no longer ago than the extension; with an authentication token,
 * that token may have expired as long ago too.
 */
async function refreshableSession(
  context: LayerContext,
  request: RouteRequest,
): Promise<{ id: string; record: SessionRecord; via: 'token' | 'cookie'; lapsed: boolean } | undefined> {
  const extension = context.config.tokenStore.refreshExtensionMs;
  const named = await namedSessionOrNone(context, request.view, extension);
  if (named === null) return undefined;
  const record = await context.sessions.load(named.id);
  const assessment = context.sessions.assess(record, request.origin.host);
  if (record === undefined) return undefined;
  if (assessment.kind !== 'reauth') return { ...named, record, lapsed: false };
  if (assessment.reason === 'cookie-expired' && context.now() < record.expiresAt + extension)
    return { ...named, record, lapsed: true };
  return undefined;
}

export async function refresh(context: LayerContext, request: RouteRequest): Promise<Decision> {
  const session = await refreshableSession(context, request);
  if (session === undefined) return notSignedIn(context, request);
  const extendedUntil = session.lapsed ? context.now() + context.config.cookieExpiration.lifetimeMs : undefined;
  const outcome = await context.sessions.refresh(session.id, session.record, extendedUntil);
  if (outcome.ok) {
    const expires = outcome.record.tokens.accessTokenExpiresAt;
    const answer: Record<string, unknown> = {
      refreshed: true,
      expires_on: expires !== undefined ? new Date(expires).toISOString() : '',
    };
    if (session.via === 'token') {
      // A renewed authentication token, valid as long as the session now is.
      answer.authenticationToken = await context.authTokens.issue(session.id, {
        userId: outcome.record.userId,
        provider: outcome.record.provider,
        expiresAt: outcome.record.expiresAt,
      });
      answer.user = { userId: outcome.record.userId };
    }
    return jsonDecision(200, answer);
  }
  switch (outcome.reason) {
    case 'no-refresh-token':
      context.logger.info(
        { reason: 'no refresh token', provider: session.record.provider, path: request.view.path },
        'request refused',
      );
      return jsonDecision(401, { error: 'This session has no refresh token; sign in again to renew it.' });
    case 'unavailable':
      return jsonDecision(502, { error: 'The identity provider could not be reached.' });
    case 'ended':
      // Signed out on another instance since this one cached the session.
      return jsonDecision(
        401,
        { error: 'This session has ended; sign in again.' },
        { cookies: [context.sessionCookie.clear(request.secure)] },
      );
    default:
      // Refused by the provider: the session is over (ReauthRequired).
      await context.sessions.destroy(session.id);
      return jsonDecision(
        401,
        { error: 'The identity provider refused to refresh; sign in again.' },
        { cookies: [context.sessionCookie.clear(request.secure)] },
      );
  }
}

/** Where a sign-out lands unless it asks for (and is allowed) another address. */
function logoutDonePath(context: LayerContext): string {
  return `${context.config.apiPrefix}/logout/done`;
}

export async function logout(context: LayerContext, request: RouteRequest): Promise<Decision> {
  const requested = returnUrlParameter(request.searchParams, ['post_logout_redirect_uri', 'post_logout_redirect_url']);
  const done = logoutDonePath(context);
  const verdict = validateReturnUrl(
    requested ?? done,
    context.config.allowedExternalRedirectUrls,
    context.config.apiPrefix,
  );
  // A return address that is not allowed is not followed, but the sign-out still happens: someone who
  // pressed "Sign out" on a shared computer must not stay signed in because the link was wrong.
  const location = verdict.ok ? verdict.location : done;
  if (!verdict.ok)
    context.logger.warn(
      { reason: `return URL refused (${verdict.reason})`, path: request.view.path },
      'logout redirect refused',
    );
  const cookies = [context.sessionCookie.clear(request.secure)];
  // An authentication token ends its session too (a forged one names none). One that expired is still
  // taken within the refresh extension: /.auth/refresh would revive its session with it, so logout must end it.
  const id =
    (await namedSessionOrNone(context, request.view, context.config.tokenStore.refreshExtensionMs))?.id ?? null;
  if (id === null) return redirectDecision(location, { cookies });
  const record = await context.sessions.load(id);
  await context.sessions.destroy(id); // server-side: a copied cookie is dead from now on
  context.logger.info({ provider: record?.provider, path: request.view.path }, 'signed out');
  if (record !== undefined) context.metrics.logout(record.provider, 'local');
  const provider = record === undefined ? undefined : context.providers.get(record.provider);
  if (provider?.endSessionUrl !== undefined) {
    try {
      const state = seal(context.transactionKey, 'logout', location, context.now() + LOGOUT_STATE_LIFETIME_MS);
      const endSession = await provider.endSessionUrl({
        ...(record?.tokens.idToken ? { idTokenHint: record.tokens.idToken } : {}),
        postLogoutRedirectUri: `${originUrl(request.origin)}${context.config.apiPrefix}/logout/complete`,
        state,
      });
      if (endSession !== undefined) return redirectDecision(endSession.href, { cookies });
    } catch (error) {
      // The local session is gone either way; the provider session outlives it.
      context.logger.warn(
        { provider: provider.alias, reason: (error as Error).message },
        'provider logout unavailable',
      );
    }
  }
  return redirectDecision(location, { cookies });
}

/** Where the provider sends the browser back after its logout. */
export function logoutComplete(context: LayerContext, request: RouteRequest): Decision {
  const state = request.searchParams.get('state');
  const opened = state === null ? undefined : unseal<string>(context.transactionKey, 'logout', state, context.now());
  const done = logoutDonePath(context);
  const target = opened?.ok ? opened.value : done;
  // Validated when sealed; validated again, as a sealed value is only as good as its contents.
  const verdict = validateReturnUrl(target, context.config.allowedExternalRedirectUrls, context.config.apiPrefix);
  return redirectDecision(verdict.ok ? verdict.location : done);
}

/** Where a sign-in with no return address lands: it says so only to a browser that holds a session. */
export async function loginDone(context: LayerContext, request: RouteRequest): Promise<Decision> {
  if ((await currentSession(context, request)) !== undefined)
    return pageDecision(200, 'Signed in', 'You are signed in.', {}, linksParagraph([{ href: '/', text: 'Continue' }]));
  const provider = context.config.defaultProvider;
  const links =
    provider !== undefined
      ? [{ href: `${context.config.apiPrefix}/login/${provider}`, text: 'Sign in' }]
      : [{ href: '/', text: 'Home' }];
  return pageDecision(200, 'Not signed in', 'You are not signed in.', {}, linksParagraph(links));
}

export function logoutDone(): Decision {
  return pageDecision(200, 'Signed out', 'You have signed out.', {}, linksParagraph([{ href: '/', text: 'Home' }]));
}

/** The version, and with a shared store whether it can be reached (for readiness checks). */
/**
 * Readiness, for a load balancer or Kubernetes' readiness probe: 503 while the token store cannot
 * be reached (every signed-in request would get 503 too), so traffic goes to instances that can
 * serve it; 200 otherwise. /.auth/version stays 200 for liveness: a restart does not bring Redis back.
 */
export function ready(context: LayerContext): Decision {
  const store = context.storeHealth;
  if (store !== undefined && !store.available) {
    return jsonDecision(
      503,
      { ready: false, tokenStore: { kind: store.kind, available: false } },
      { headers: { 'Retry-After': '5' } },
    );
  }
  return jsonDecision(200, { ready: true });
}

export function version(context: LayerContext): Decision {
  const store = context.storeHealth;
  return jsonDecision(200, {
    version: context.version,
    ...(store !== undefined ? { tokenStore: { kind: store.kind, available: store.available } } : {}),
  });
}
