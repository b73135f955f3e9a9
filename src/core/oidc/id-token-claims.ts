// The claims OpenID Connect Core §2 and §3.1.3.7 require of every ID token,
// beyond what validateJwt checks for any JWT of the provider (signature,
// iss, aud, exp, nonce): openid-client checks them on the ID tokens it reads,
// and a multi-tenant directory's, which gatehouse reads itself
// (id-token-aside.ts), must meet the same rules.
import type { JWTPayload } from 'jose';

import { InvalidTokenError } from '../tokens/errors.js';

/**
 * Refuses (InvalidTokenError) an ID token without a subject or an issue time, or one for several
 * audiences that does not name this client as its authorized party (`azp`).
 */
export function checkIdTokenClaims(claims: JWTPayload, clientId: string): void {
  if (typeof claims.sub !== 'string' || claims.sub === '') throw new InvalidTokenError('claim sub missing');
  if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat)) throw new InvalidTokenError('claim iat missing');
  if (Array.isArray(claims.aud) && claims.aud.length !== 1 && claims.azp !== clientId)
    throw new InvalidTokenError(claims.azp === undefined ? 'claim azp missing' : 'claim azp check_failed');
  if (claims.auth_time !== undefined && (typeof claims.auth_time !== 'number' || !Number.isFinite(claims.auth_time)))
    throw new InvalidTokenError('claim auth_time invalid');
}
