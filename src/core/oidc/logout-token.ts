// OpenID Connect Back-Channel Logout 1.0 (§2.4, §2.6): what a logout token must
// say beyond what every JWT of its provider must (signature, algorithm, iss,
// aud, exp: validateJwt). The logout event is what keeps an ID token, or any
// other JWT the provider signs for this client, from being taken for a logout;
// a nonce is refused for the same reason.
import type { JWTPayload } from 'jose';

import { isJsonObject } from '../config/json-object.js';
import { InvalidTokenError } from '../tokens/errors.js';
import { CLOCK_TOLERANCE_SECONDS } from '../tokens/jwt-validator.js';
import { BACK_CHANNEL_LOGOUT_EVENT } from '../tokens/logout-event.js';

/** Whose sign-ins a provider says have ended. */
export interface LogoutNotice {
  /** The user: without `sid`, every sign-in of theirs made before `issuedAt` ended. */
  readonly sub?: string;
  /** The provider session that ended: the sign-ins made in it, and only those. */
  readonly sid?: string;
  /** The logout token's `iat`, ms since the epoch, on the provider's clock. */
  readonly issuedAt: number;
}

function identifier(claims: JWTPayload, claim: 'sub' | 'sid'): string | undefined {
  const value = claims[claim];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new InvalidTokenError(`claim ${claim} invalid`);
  return value;
}

/** The notice a verified logout token's claims give; throws InvalidTokenError when they are not a logout. */
export function logoutNotice(claims: JWTPayload, nowMs: number): LogoutNotice {
  const { events } = claims;
  if (!isJsonObject(events) || !isJsonObject(events[BACK_CHANNEL_LOGOUT_EVENT]))
    throw new InvalidTokenError('not a logout token (no back-channel logout event)');
  if (claims.nonce !== undefined) throw new InvalidTokenError('claim nonce present');
  // Required by §2.4. Not used to refuse replays: a sign-out replayed ends nothing more (ProviderSignOuts.record).
  const { jti } = claims;
  if (typeof jti !== 'string' || jti === '')
    throw new InvalidTokenError(jti === undefined ? 'claim jti missing' : 'claim jti invalid');
  const { iat } = claims;
  if (typeof iat !== 'number' || !Number.isFinite(iat))
    throw new InvalidTokenError(iat === undefined ? 'claim iat missing' : 'claim iat invalid');
  // A logout dated later than now would also end sign-ins made after it arrived.
  if (iat > nowMs / 1000 + CLOCK_TOLERANCE_SECONDS) throw new InvalidTokenError('claim iat in the future');
  const sub = identifier(claims, 'sub');
  const sid = identifier(claims, 'sid');
  if (sub === undefined && sid === undefined) throw new InvalidTokenError('neither sub nor sid');
  return { ...(sub !== undefined ? { sub } : {}), ...(sid !== undefined ? { sid } : {}), issuedAt: iat * 1000 };
}
