// Checks a provider-issued JWT (ID token or bearer access token) with jose's
// jwtVerify: the signature by one of the provider's keys and an algorithm the
// provider announces (never symmetric), and the registered claims. The claims
// peeked at before verification only pick the provider and its issuer; what is
// returned is what jose verified. Header fields that point at other keys (jku,
// x5u, jwk) are never used. A back-channel logout token is taken only where a
// logout token is expected; the nonce of a sign-in is compared here.
import { isUtf8 } from 'node:buffer';

import { errors, jwtVerify, type JWTPayload } from 'jose';

import { ProviderUnavailableError } from '../providers/errors.js';
import { InvalidTokenError } from './errors.js';
import type { RemoteKeySet } from './key-set.js';
import { isLogoutToken } from './logout-event.js';

/** Tokens are a few KB (directory tokens with many groups near 6 KB); anything much bigger is refused before parsing. */
export const MAX_TOKEN_LENGTH = 12 * 1024;
export const CLOCK_TOLERANCE_SECONDS = 60;
/** Never symmetric (a provider's public key must not become an HMAC secret), never none. */
const ASYMMETRIC = /^(RS|PS|ES)(256|384|512)$|^ES256K$|^EdDSA$|^Ed25519$/;

export function asymmetricAlgorithms(announced: readonly string[] | undefined): string[] {
  const allowed = (announced ?? ['RS256']).filter((alg) => ASYMMETRIC.test(alg));
  return allowed.length > 0 ? allowed : ['RS256'];
}

/** What a provider's tokens must satisfy, whatever they are for. */
export interface JwtRules {
  readonly keys: RemoteKeySet;
  readonly algorithms: readonly string[];
  /** The issuer this token must carry (may depend on its own claims, e.g. a tenant), or undefined to refuse it. */
  readonly issuer: (unverified: JWTPayload) => string | undefined;
  readonly now: () => number;
}

/** What this particular use expects: the audiences it is for, and the nonce of a sign-in. */
export interface JwtExpectations {
  readonly audiences: readonly string[];
  readonly nonce?: string;
  /** A back-channel logout, whose token is a logout token (logoutNotice checks it is one); every other use refuses logout tokens. */
  readonly logoutToken?: boolean;
}

/** A token's claims read before verification. */
export interface PeekedToken {
  /** Untrusted: only to pick the provider and its rules (validateJwt returns the verified claims). */
  readonly claims: JWTPayload;
}

/** The claims unverified, decoded with node's own base64url decoder: a malformed token costs no more. */
export function peekToken(token: string): PeekedToken {
  if (token.length > MAX_TOKEN_LENGTH) throw new InvalidTokenError('token too large');
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  // Exactly three segments: compact JWS (a five-segment JWE is not a signed token).
  if (second < 0 || token.indexOf('.', second + 1) >= 0) throw new InvalidTokenError('malformed token');
  const payload = Buffer.from(token.slice(first + 1, second), 'base64url');
  if (!isUtf8(payload)) throw new InvalidTokenError('malformed token');
  let claims: unknown;
  try {
    claims = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new InvalidTokenError('malformed token');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims))
    throw new InvalidTokenError('malformed token');
  return { claims: claims as JWTPayload };
}

/** `peeked`: the token as peekToken read it, when the caller has it already. */
export async function validateJwt(
  token: string,
  rules: JwtRules,
  expected: JwtExpectations,
  peeked: PeekedToken = peekToken(token),
): Promise<JWTPayload> {
  const issuer = rules.issuer(peeked.claims);
  if (issuer === undefined) throw new InvalidTokenError('issuer not accepted');
  // Another issuer's token is refused before any signature work: its key ids, unknown here, would
  // otherwise cost this provider a key refresh. (jose checks iss again on the verified claims.)
  if (peeked.claims.iss !== issuer)
    throw new InvalidTokenError(peeked.claims.iss === undefined ? 'claim iss missing' : 'claim iss check_failed');
  let verified: Awaited<ReturnType<typeof jwtVerify>>;
  try {
    // RFC 7519 §4.1 as jose applies it: iss, aud (one of ours), exp required and not passed,
    // nbf (if any) come, iat (if any) a number, CLOCK_TOLERANCE_SECONDS of skew either way; an
    // unencoded payload (b64: false) refused. jose only reads the lists; no per-call copies.
    verified = await jwtVerify(token, rules.keys.key, {
      algorithms: rules.algorithms as string[],
      issuer,
      audience: expected.audiences as string[],
      requiredClaims: ['exp'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(rules.now()),
    });
  } catch (error) {
    // Keys that cannot be fetched: the token cannot be checked either way (503, not 401).
    if (error instanceof ProviderUnavailableError) throw error;
    throw new InvalidTokenError(reasonOf(error));
  }
  const claims = verified.payload;
  // JSON's 1e999 parses as Infinity, which jose takes as a number: an expiry must be a real date.
  if (!Number.isFinite(claims.exp)) throw new InvalidTokenError('claim exp invalid');
  if (expected.logoutToken !== true && isLogoutToken(verified.protectedHeader, claims))
    throw new InvalidTokenError('a logout token, not accepted here');
  if (expected.nonce !== undefined && claims.nonce !== expected.nonce) throw new InvalidTokenError('nonce mismatch');
  return claims;
}

function reasonOf(error: unknown): string {
  if (error instanceof InvalidTokenError) return error.reason;
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTInvalid) return 'malformed token';
  if (error instanceof errors.JWTClaimValidationFailed) return `claim ${error.claim} ${error.reason}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature invalid';
  if (error instanceof errors.JOSEError) return error.code;
  return 'unverifiable';
}
