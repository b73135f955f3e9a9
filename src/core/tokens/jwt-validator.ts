// Checks a provider-issued JWT (ID token or bearer access token) with jose:
// signature by one of the provider's keys, an asymmetric algorithm the
// provider announces, iss, aud, exp and nbf (with a small tolerance).
// Header fields that point at other keys (jku, x5u, jwk) are never used.
import { errors, jwtVerify, type JWTPayload } from 'jose';

import { ProviderUnavailableError } from '../providers/errors.js';
import { InvalidTokenError } from './errors.js';
import type { RemoteKeySet } from './key-set.js';

/** Tokens are a few KB (directory tokens with many groups near 6 KB); anything much bigger is refused before parsing. */
export const MAX_TOKEN_LENGTH = 12 * 1024;
export const CLOCK_TOLERANCE_SECONDS = 60;
const REQUIRED_CLAIMS = ['iss', 'aud', 'exp'];
/** Never symmetric (a provider's public key must not become an HMAC secret), never none. */
const ASYMMETRIC = /^(RS|PS|ES)(256|384|512)$|^ES256K$|^EdDSA$|^Ed25519$/;

export function asymmetricAlgorithms(announced: readonly string[] | undefined): string[] {
  const allowed = (announced ?? ['RS256']).filter((alg) => ASYMMETRIC.test(alg));
  return allowed.length > 0 ? allowed : ['RS256'];
}

export interface JwtRules {
  readonly keys: RemoteKeySet;
  readonly algorithms: readonly string[];
  /** The issuer this token must carry (may depend on its own claims, e.g. a tenant), or undefined to refuse it. */
  readonly issuer: (unverified: JWTPayload) => string | undefined;
  readonly audiences: readonly string[];
  readonly now: () => number;
  readonly nonce?: string;
}

/**
 * The claims unverified: only to pick rules; nothing is trusted before validateJwt.
 * Decoded with node's own base64url decoder (jose's portable one is several times slower);
 * jose decodes the same bytes again, strictly, when it verifies.
 */
export function peekClaims(token: string): JWTPayload {
  if (token.length > MAX_TOKEN_LENGTH) throw new InvalidTokenError('token too large');
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  // Exactly three segments: compact JWS (a five-segment JWE is not a signed token).
  if (second < 0 || token.indexOf('.', second + 1) >= 0) throw new InvalidTokenError('malformed token');
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'));
  } catch {
    throw new InvalidTokenError('malformed token');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw new InvalidTokenError('malformed token');
  return claims as JWTPayload;
}

/** `unverified`: the token's claims as peekClaims read them, when the caller has them already. */
export async function validateJwt(token: string, rules: JwtRules, unverified: JWTPayload = peekClaims(token)): Promise<JWTPayload> {
  const issuer = rules.issuer(unverified);
  if (issuer === undefined) throw new InvalidTokenError('issuer not accepted');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, rules.keys.key, {
      // jose only reads these lists; no per-call copies.
      algorithms: rules.algorithms as string[],
      issuer,
      audience: rules.audiences as string[],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(rules.now()),
      requiredClaims: REQUIRED_CLAIMS,
    }));
  } catch (error) {
    // Keys that cannot be fetched: the token cannot be checked either way (503, not 401).
    if (error instanceof ProviderUnavailableError) throw error;
    throw new InvalidTokenError(reasonOf(error));
  }
  if (rules.nonce !== undefined && payload.nonce !== rules.nonce) throw new InvalidTokenError('nonce mismatch');
  return payload;
}

function reasonOf(error: unknown): string {
  if (error instanceof InvalidTokenError) return error.reason;
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `claim ${error.claim} ${error.reason}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature invalid';
  if (error instanceof errors.JOSEError) return error.code;
  return 'unverifiable';
}
