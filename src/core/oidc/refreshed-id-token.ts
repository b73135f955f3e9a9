// A refresh's new ID token must be of the same sign-in as the one it
// follows (OpenID Connect Core §12.2): the same issuer, so for a multi-tenant
// directory the same tenant, and the same subject. openid-client checks a
// refreshed ID token on its own and leaves this comparison to the client.
import { decodeJwt, type JWTPayload } from 'jose';

import { InvalidTokenError } from '../tokens/errors.js';

/** Refuses (InvalidTokenError) `claims` of a refreshed ID token whose iss or sub is not `previousIdToken`'s. */
export function checkSameSignIn(claims: Readonly<JWTPayload>, previousIdToken: string): void {
  let previous: JWTPayload;
  try {
    previous = decodeJwt(previousIdToken);
  } catch {
    throw new InvalidTokenError('the session has no readable ID token to compare with');
  }
  if (claims.iss !== previous.iss) throw new InvalidTokenError('claim iss not the sign-in issuer');
  if (claims.sub !== previous.sub) throw new InvalidTokenError('claim sub not the sign-in subject');
}
