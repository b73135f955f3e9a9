// How long a web server may keep one verify answer (docs/forward-auth.md#caching-verify-answers).
// Only an allowed answer that names a caller is ever kept, and never longer than the configured
// lifetime, nor than the decision itself allows (a rule that must be asked each time says so on
// the decision), nor than a token the answer rests on stays valid. Everything else (a challenge,
// a refusal, an error, an anonymous answer) is asked about every time.
import { decodeJwt } from 'jose';

import { headerValue, type Decision, type RequestView } from '../http/request-view.js';
import type { VerifyCacheSettings } from './cache-settings.js';

/** The client-directed flow's session token header: a JWT with an expiry of its own. */
const AUTHENTICATION_TOKEN_HEADER = 'x-zumo-auth';

/**
 * Whole seconds the answer to `decision` may be kept for the request's credentials, host, path,
 * method and upgrade; 0: not at all.
 */
export function keptSeconds(
  decision: Decision,
  request: Pick<RequestView, 'headers'>,
  settings: VerifyCacheSettings | undefined,
  nowMs: number,
): number {
  if (settings === undefined || decision.kind !== 'forward' || decision.identity === null) return 0;
  let seconds = settings.maxAgeSeconds;
  const own = decision.cacheableForSeconds;
  if (own !== undefined) seconds = Math.min(seconds, Math.floor(own));
  // A bearer token (it decides when present) and an authentication token each bound the answer by
  // their own expiry; one whose expiry cannot be read is never kept.
  const bearer = bearerTokenOf(request);
  if (bearer !== undefined) seconds = Math.min(seconds, secondsLeft(bearer, nowMs));
  const authenticationToken = headerValue(request, AUTHENTICATION_TOKEN_HEADER);
  if (authenticationToken !== undefined) seconds = Math.min(seconds, secondsLeft(authenticationToken.trim(), nowMs));
  return seconds > 0 ? seconds : 0;
}

/** The token of an `Authorization: Bearer …` header, as the core reads it (routes/client-directed.ts). */
function bearerTokenOf(request: Pick<RequestView, 'headers'>): string | undefined {
  const header = headerValue(request, 'authorization');
  if (header === undefined || header.length < 7 || header.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  return header.charCodeAt(6) === 0x20 ? header.slice(7).trim() : undefined;
}

/** Whole seconds until a JWT's `exp` (it was verified by the decision); 0 when it has none or is not a JWT. */
function secondsLeft(token: string, nowMs: number): number {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === 'number' && Number.isFinite(exp) ? Math.floor(exp - nowMs / 1000) : 0;
  } catch {
    return 0;
  }
}
