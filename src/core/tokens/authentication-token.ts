// The authentication token of the client-directed flow (sent back as
// X-ZUMO-AUTH): a JWT signed by this deployment (HS256, a key derived from
// the master key for this purpose and app) that names a server-side session.
// Like the session cookie it is only a pointer: the session record must still
// exist and be valid, so logout revokes it.
import { errors, jwtVerify, SignJWT } from 'jose';

import { InvalidTokenError } from './errors.js';
import { MAX_TOKEN_LENGTH } from './jwt-validator.js';

const ISSUER = 'gatehouse';
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export class AuthenticationTokens {
  constructor(
    private readonly key: Buffer,
    /** The app scope: the token's audience, so tokens of another app never fit. */
    private readonly app: string,
    private readonly now: () => number = Date.now,
  ) {}

  issue(sessionId: string, claims: { userId: string; provider: string; expiresAt: number }): Promise<string> {
    const issuedAt = Math.floor(this.now() / 1000);
    return new SignJWT({ sid: sessionId, idp: claims.provider })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(this.app)
      .setSubject(claims.userId)
      .setIssuedAt(issuedAt)
      .setNotBefore(issuedAt)
      .setExpirationTime(Math.floor(claims.expiresAt / 1000))
      .sign(this.key);
  }

  /**
   * The session id a token names. `expiredGraceMs` accepts a token that expired
   * at most that long ago (the refresh extension of /.auth/refresh).
   */
  async sessionId(token: string, expiredGraceMs = 0): Promise<string> {
    if (token.length > MAX_TOKEN_LENGTH) throw new InvalidTokenError('token too large');
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: this.app,
        currentDate: new Date(this.now()),
        // The grace extends exp (a small tolerance for clocks otherwise).
        clockTolerance: Math.max(5, Math.floor(expiredGraceMs / 1000)),
        requiredClaims: ['exp', 'sid', 'sub'],
      });
      if (typeof payload.sid !== 'string' || !SESSION_ID.test(payload.sid))
        throw new InvalidTokenError('malformed session reference');
      return payload.sid;
    } catch (error) {
      if (error instanceof InvalidTokenError) throw error;
      if (error instanceof errors.JWTExpired) throw new InvalidTokenError('expired');
      throw new InvalidTokenError('not a valid authentication token');
    }
  }
}
