// The login transaction (state, nonce, PKCE verifier, return URL, host): sealed into a cookie of
// its own per sign-in under way, so any instance can finish the login (docs/architecture.md#sessions-and-the-token-store).
import { createHash } from 'node:crypto';

import { unseal } from '../crypto/sealed.js';
import { requestCookiesByPrefix, type RouteRequest } from '../http/request-view.js';
import { nameRequiresSecure, setCookie } from '../http/responses.js';
import type { Provider } from '../providers/provider.js';
import type { LayerContext } from './context.js';
import { loginPath } from './login-paths.js';

/** The sealed login transaction: travels with the browser so any instance can finish the login. */
export interface LoginTransaction {
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
export const TRANSACTION_COOKIE_GRACE_MS = 60 * 60_000;
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
export function transactionCookieName(context: LayerContext, correlation: string): string {
  return transactionCookiePrefix(context) + createHash('sha256').update(correlation).digest('base64url').slice(0, 16);
}

/** Bound to provider and cookie name: a transaction opens only where it was sealed. */
export function transactionLabel(alias: string, cookieName: string): string {
  return `login:${alias}:${cookieName}`;
}

/**
 * The login transaction cookie. A provider that POSTs the callback from its own site
 * (form_post) needs SameSite=None (https only) to get it back; over plain http the
 * attribute is left out (the browser's default lets a top-level POST carry it briefly).
 */
export function transactionCookie(
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
export function displacedLogins(context: LayerContext, request: RouteRequest, provider: Provider): string[] {
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
