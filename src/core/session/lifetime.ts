// How long a session lasts, per login.cookieExpiration. One place, because the
// sign-outs providers report (provider-sign-outs.ts) must be kept for as long as
// a session made before them can last.
import type { AuthConfig } from '../config/auth-config.js';

/**
 * The longest an IdentityProviderDerived session lasts, whatever its ID token says: its
 * lifetime is the provider's to set (an hour at most providers; Auth0 allows up to 30 days),
 * and a sign-out reported at the provider must outlive every session made before it.
 */
export const LONGEST_DERIVED_SESSION_MS = 30 * 24 * 3600_000;

/**
 * When a session made `now` ends: FixedTime, after `timeToExpiration`; IdentityProviderDerived,
 * when the provider's assertion (the ID token's `exp`) does, at most 30 days on, and after
 * `timeToExpiration` for a sign-in that has no such assertion (OAuth 2.0 and 1.0a providers).
 */
export function sessionExpiresAt(
  cookieExpiration: AuthConfig['cookieExpiration'],
  now: number,
  assertionExpiresAt?: number,
): number {
  if (cookieExpiration.convention === 'IdentityProviderDerived' && assertionExpiresAt !== undefined) {
    return Math.min(assertionExpiresAt, now + LONGEST_DERIVED_SESSION_MS);
  }
  return now + cookieExpiration.lifetimeMs;
}

/** The longest a session can last under this configuration (before any refresh extension). */
export function longestSessionMs(cookieExpiration: AuthConfig['cookieExpiration']): number {
  return cookieExpiration.convention === 'IdentityProviderDerived'
    ? Math.max(cookieExpiration.lifetimeMs, LONGEST_DERIVED_SESSION_MS)
    : cookieExpiration.lifetimeMs;
}
