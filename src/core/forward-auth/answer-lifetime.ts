// How long a web server may keep one verify answer (docs/forward-auth.md#caching-verify-answers).
// Only an allowed answer that names a caller is ever kept, and never longer than the configured
// lifetime, nor than the decision itself allows (a rule that must be asked each time says so on
// the decision), nor than a token the answer rests on stays valid. Everything else (a challenge,
// a refusal, an error, an anonymous answer) is asked about every time. Nor is an answer on a path
// whose authorization rules differ by method: a web server's cache must not be where a rule's
// method list is applied.
import { decodeJwt } from 'jose';

import { rulesFor } from '../authorization/path-rule.js';
import type { AuthorizationPolicy } from '../authorization/policy.js';
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
  request: Pick<RequestView, 'headers' | 'path'>,
  settings: VerifyCacheSettings | undefined,
  nowMs: number,
  policy?: AuthorizationPolicy,
): number {
  if (settings === undefined || decision.kind !== 'forward' || decision.identity === null) return 0;
  if (policy !== undefined && rulesDifferByMethod(policy, request.path)) return 0;
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

/** A method no rule names: the rules it falls under are those of every method no rule names. */
const UNNAMED_METHOD = 'GATEHOUSE-UNNAMED-METHOD';

/**
 * Whether the rules a path falls under depend on the request's method: some method a path rule
 * names (HEAD with GET) falls under other rules than the methods no rule names.
 */
export function rulesDifferByMethod(policy: AuthorizationPolicy, path: string): boolean {
  const named = new Set<string>();
  for (const rule of policy.paths) for (const method of rule.methods ?? []) named.add(method);
  if (named.size === 0) return false;
  if (named.has('GET')) named.add('HEAD');
  const unnamed = rulesFor(policy.paths, policy.fallback, UNNAMED_METHOD, path);
  for (const method of named) {
    const rules = rulesFor(policy.paths, policy.fallback, method, path);
    if (rules.length !== unnamed.length || rules.some((rule, i) => rule !== unnamed[i])) return true;
  }
  return false;
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
