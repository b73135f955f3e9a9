// The tokens of a provider's token answer, as a session keeps them.
import type * as oidc from 'openid-client';

import { expiryAfter } from '../providers/provider-http.js';
import type { DpopKey } from './dpop-key.js';

export interface TokenSet {
  readonly accessToken: string | undefined;
  readonly idToken: string | undefined;
  readonly refreshToken: string | undefined;
  /** ms since epoch */
  readonly accessTokenExpiresAt: number | undefined;
  /** Validated ID token claims (on refresh: the new ID token's, if one was issued). */
  readonly claims: Readonly<Record<string, unknown>> | undefined;
  /** With DPoP: the session's key, which its tokens are bound to (kept in the sealed session record). */
  readonly dpopKey?: DpopKey;
}

export type TokenAnswer = oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;

/** The tokens of `answer`, its ID token's claims as openid-client checked them; `now` in ms. */
export function tokenSetOf(answer: TokenAnswer, now: number): TokenSet {
  return {
    accessToken: answer.access_token,
    idToken: answer.id_token,
    refreshToken: answer.refresh_token,
    accessTokenExpiresAt: expiryAfter(answer.expiresIn(), now),
    claims: answer.claims() as Record<string, unknown> | undefined,
  };
}
