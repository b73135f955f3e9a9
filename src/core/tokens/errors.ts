/** A bearer or authentication token that is not good: 401 with `WWW-Authenticate: Bearer error="invalid_token"`. */
export class InvalidTokenError extends Error {
  constructor(readonly reason: string) {
    super(`invalid token: ${reason}`);
    this.name = 'InvalidTokenError';
  }
}

/** A good token whose holder the provider's policy does not allow: 403. */
export class TokenForbiddenError extends Error {
  constructor(readonly reason: string) {
    super(`token not allowed: ${reason}`);
    this.name = 'TokenForbiddenError';
  }
}
