// Opaque bearer tokens (not JWTs) are checked by asking the provider (token
// introspection, RFC 7662). What its answer must say for the token to be taken,
// and for how long the answer may be trusted. See docs/configuration.md#opaque-bearer-tokens.
import type { JWTPayload } from 'jose';

import { InvalidTokenError } from './errors.js';

/** How long an answer is trusted by default, at most (the token's own `exp` may end it sooner). */
export const DEFAULT_INTROSPECTION_CACHE_MS = 5 * 60_000;

/** A token that is not a JWT (three dot-separated parts): one only its provider can tell about. */
export function isOpaqueToken(token: string): boolean {
  let dots = 0;
  for (let i = token.indexOf('.'); i !== -1; i = token.indexOf('.', i + 1)) dots++;
  return dots !== 2;
}

export interface IntrospectionExpectations {
  /** This client: a token issued to it is for it. */
  readonly clientId: string;
  /** The audiences a token may be for (the allowed audiences, else the client id). */
  readonly audiences: readonly string[];
  /** The provider's issuer, when the answer names one. */
  readonly issuer: string;
  readonly now: number;
  /** The longest an answer is trusted (its `exp`, if sooner, ends it). */
  readonly cacheMs: number;
}

/**
 * The claims of an active token's introspection answer, with the `exp` it is trusted until (the
 * token's, or the cache maximum when sooner or absent). Throws InvalidTokenError for an inactive
 * token, an expired one, one of another issuer, and one for another client: neither issued to this
 * client nor naming one of its audiences (a provider answers any client's tokens to a client that
 * may introspect).
 */
export function introspectedClaims(
  answer: Readonly<Record<string, unknown>>,
  expected: IntrospectionExpectations,
): JWTPayload & { readonly exp: number } {
  if (answer.active !== true) throw new InvalidTokenError('not active (introspection)');
  const nowS = Math.floor(expected.now / 1000);
  const exp = typeof answer.exp === 'number' && Number.isFinite(answer.exp) ? answer.exp : undefined;
  if (exp !== undefined && exp <= nowS) throw new InvalidTokenError('expired');
  if (typeof answer.nbf === 'number' && answer.nbf > nowS + 60) throw new InvalidTokenError('not yet valid');
  if (answer.iss !== undefined && answer.iss !== expected.issuer)
    throw new InvalidTokenError('issuer mismatch (introspection)');
  const audiences = typeof answer.aud === 'string' ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : [];
  const forThisClient =
    answer.client_id === expected.clientId ||
    audiences.some((audience) => typeof audience === 'string' && expected.audiences.includes(audience));
  if (!forThisClient) throw new InvalidTokenError('issued to another client (introspection)');
  const cachedUntil = Math.floor((expected.now + expected.cacheMs) / 1000);
  return { ...answer, exp: exp === undefined ? cachedUntil : exp } as JWTPayload & { exp: number };
}

/** Until when an answer may be trusted (ms): the token's `exp`, or sooner the cache maximum. */
export function trustedUntil(exp: number, expected: Pick<IntrospectionExpectations, 'now' | 'cacheMs'>): number {
  return Math.min(exp * 1000, expected.now + expected.cacheMs);
}
