// Checks a provider-issued JWT (ID token or bearer access token): jose checks
// the signature by one of the provider's keys and the algorithm (one the
// provider announces, never symmetric); the claims (iss, aud, exp, nbf, iat,
// nonce) are checked here, on the claims read before verification, once the
// verified payload is shown to be exactly the bytes they were read from.
// Header fields that point at other keys (jku, x5u, jwk) are never used. A
// back-channel logout token is taken only where a logout token is expected.
import { isUtf8 } from 'node:buffer';

import { compactVerify, errors, type JWTPayload } from 'jose';

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

/** A token's claims read before verification, and the payload bytes they were read from. */
export interface PeekedToken {
  /** Untrusted until validateJwt has checked the token: only to pick the provider and its rules. */
  readonly claims: JWTPayload;
  readonly payload: Buffer;
}

/**
 * The claims unverified, decoded with node's own base64url decoder (jose's
 * portable one is several times slower). validateJwt later compares these
 * bytes with the payload jose verified, so the claims it checks are the signed ones.
 */
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
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw new InvalidTokenError('malformed token');
  return { claims: claims as JWTPayload, payload };
}

/** `peeked`: the token as peekToken read it, when the caller has it already. */
export async function validateJwt(token: string, rules: JwtRules, expected: JwtExpectations, peeked: PeekedToken = peekToken(token)): Promise<JWTPayload> {
  const issuer = rules.issuer(peeked.claims);
  if (issuer === undefined) throw new InvalidTokenError('issuer not accepted');
  // Another issuer's token is refused before any signature work: its key ids, unknown here, would
  // otherwise cost this provider a key refresh. (Checked again below on the verified claims.)
  if (peeked.claims.iss !== issuer) throw new InvalidTokenError(peeked.claims.iss === undefined ? 'claim iss missing' : 'claim iss check_failed');
  let verified: Awaited<ReturnType<typeof compactVerify>>;
  try {
    // jose only reads the algorithm list; no per-call copy.
    verified = await compactVerify(token, rules.keys.key, { algorithms: rules.algorithms as string[] });
  } catch (error) {
    // Keys that cannot be fetched: the token cannot be checked either way (503, not 401).
    if (error instanceof ProviderUnavailableError) throw error;
    throw new InvalidTokenError(reasonOf(error));
  }
  // A JWT's payload is always base64url-encoded (RFC 7519 §7.2), and the claims checked must be the signed bytes.
  if (verified.protectedHeader.b64 === false || !peeked.payload.equals(verified.payload)) throw new InvalidTokenError('malformed token');
  if (expected.logoutToken !== true && isLogoutToken(verified.protectedHeader, peeked.claims)) throw new InvalidTokenError('a logout token, not accepted here');
  checkClaims(peeked.claims, issuer, expected, rules.now());
  return peeked.claims;
}

/**
 * RFC 7519 §4.1 as a relying party applies it: `iss` is the expected issuer,
 * `aud` names one of ours, `exp` is present and not passed, `nbf` (if any) has
 * come, `iat` (if any) is a date; dates are whole seconds, allowing
 * CLOCK_TOLERANCE_SECONDS of clock skew either way.
 */
export function checkClaims(claims: JWTPayload, issuer: string, expected: JwtExpectations, nowMs: number): void {
  if (claims.iss === undefined) throw new InvalidTokenError('claim iss missing');
  if (claims.iss !== issuer) throw new InvalidTokenError('claim iss check_failed');
  const { aud } = claims;
  if (aud === undefined) throw new InvalidTokenError('claim aud missing');
  const { audiences } = expected;
  const audienceMatches = typeof aud === 'string' ? audiences.includes(aud) : Array.isArray(aud) && aud.some((a) => audiences.includes(a));
  if (!audienceMatches) throw new InvalidTokenError('claim aud check_failed');
  const now = Math.floor(nowMs / 1000);
  const exp = numericDate(claims, 'exp', true)!;
  if (exp <= now - CLOCK_TOLERANCE_SECONDS) throw new InvalidTokenError('expired');
  const nbf = numericDate(claims, 'nbf', false);
  if (nbf !== undefined && nbf > now + CLOCK_TOLERANCE_SECONDS) throw new InvalidTokenError('claim nbf check_failed');
  numericDate(claims, 'iat', false);
  if (expected.nonce !== undefined && claims.nonce !== expected.nonce) throw new InvalidTokenError('nonce mismatch');
}

/** A NumericDate claim: a finite number (JSON's 1e999 parses as Infinity: never valid). */
function numericDate(claims: JWTPayload, claim: 'exp' | 'nbf' | 'iat', required: boolean): number | undefined {
  const value = claims[claim];
  if (value === undefined) {
    if (required) throw new InvalidTokenError(`claim ${claim} missing`);
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidTokenError(`claim ${claim} invalid`);
  return value;
}

function reasonOf(error: unknown): string {
  if (error instanceof InvalidTokenError) return error.reason;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature invalid';
  if (error instanceof errors.JOSEError) return error.code;
  return 'unverifiable';
}
