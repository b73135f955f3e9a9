// What a failed call to an OpenID provider means: the provider is unavailable
// (unreachable, too slow, answering what no provider would: a 503) or it
// refused (an OAuth error, a token that fails its checks). openid-client's
// errors and gatehouse's own come out as one of the two.
import * as oidc from 'openid-client';

import { ProviderRefusedError, ProviderUnavailableError } from '../providers/errors.js';
import { refusalWithCode } from '../providers/oauth-error-code.js';
import { InvalidTokenError } from '../tokens/errors.js';

/** Network failures and timeouts, as opposed to the provider saying no. */
function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return true;
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) return true;
  const cause = (error as { cause?: { code?: string } }).cause;
  return (
    typeof cause?.code === 'string' && /^(ECONN|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|UND_ERR)/.test(cause.code)
  );
}

/** Why a provider could not be reached, in a word a reader can act on (ECONNREFUSED, ENOTFOUND, a timeout). */
function unreachableCause(error: Error): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'no answer in time';
  return cause?.message ?? error.message;
}

/** `error`, met `during` a call to the provider, as ProviderUnavailableError or ProviderRefusedError. */
export function providerFailure(error: unknown, during: string): Error {
  if (error instanceof ProviderUnavailableError || error instanceof ProviderRefusedError) return error;
  // boundedFetch's refusal of an oversized answer, as openid-client wraps it.
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof ProviderUnavailableError) return new ProviderUnavailableError(`${during}: ${cause.message}`);
  if (error instanceof InvalidTokenError) return new ProviderRefusedError(`${during}: ID token ${error.reason}`);
  if (isUnreachable(error))
    return new ProviderUnavailableError(`${during}: provider unreachable (${unreachableCause(error as Error)})`);
  if (error instanceof oidc.ResponseBodyError) return refusalWithCode(`${during}: provider answered`, error.error);
  if (error instanceof oidc.AuthorizationResponseError) return refusalWithCode(`${during}:`, error.error);
  const message = error instanceof Error ? error.message : String(error);
  // Unexpected responses (HTML error pages, wrong content types) mean the provider is not working.
  if (/unexpected|content-type|json/i.test(message) && !/id_token|claim|nonce|state|signature|jwt/i.test(message)) {
    return new ProviderUnavailableError(`${during}: ${message}`);
  }
  return new ProviderRefusedError(`${during}: ${message}`);
}
