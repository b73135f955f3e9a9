// The published keys as a JWKS document (RFC 7517 §5), the answer of GET {apiPrefix}/keys: what
// any JWT library fetches to check an assertion (jose's createRemoteJWKSet, PyJWT's PyJWKClient…).
import type { JWK } from 'jose';

import { jsonDecision } from '../http/responses.js';
import type { RespondDecision } from '../http/request-view.js';
import { JWKS_MAX_AGE_SECONDS } from './key-ring.js';

/**
 * Cacheable for less than a new key is published before it signs, so an app that caches the
 * document never meets an assertion whose key it has not fetched (key-ring.ts).
 */
export const JWKS_CACHE_CONTROL = `public, max-age=${JWKS_MAX_AGE_SECONDS}`;

/** The last answer, reused while the published keys are the same array (the ring's until it changes). */
let last: { readonly keys: readonly JWK[]; readonly answer: RespondDecision } | undefined;

export function jwksDecision(keys: readonly JWK[]): RespondDecision {
  if (last?.keys === keys) return last.answer;
  const answer = jsonDecision(200, { keys }, { headers: { 'Cache-Control': JWKS_CACHE_CONTROL } });
  last = { keys, answer };
  return answer;
}
