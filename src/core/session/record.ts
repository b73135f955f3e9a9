import type { AccessFacts } from '../authorization/access-facts.js';
import type { Claim } from '../identity.js';
import type { DpopKey } from '../oidc/dpop-key.js';

/** What the token store keeps for one signed-in session. */
export interface SessionRecord {
  /** The app scope the session belongs to. */
  readonly app: string;
  /** Provider alias (`-IDP`). */
  readonly provider: string;
  readonly userId: string;
  readonly userName: string;
  readonly nameType: string;
  readonly roleType: string;
  readonly claims: ReadonlyArray<Claim>;
  readonly tokens: SessionTokens;
  /** ms since epoch. */
  readonly createdAt: number;
  /** End of the session (cookie expiration), ms since epoch. */
  readonly expiresAt: number;
  /** Fingerprint of the provider configuration the session was established under. */
  readonly configFingerprint: string;
  /** Host the sign-in completed on. */
  readonly host: string;
  /** OpenID providers: how the provider names this sign-in, which its back-channel logout names again. */
  readonly providerSession?: ProviderSession;
  /** What authorization rules look at, from the sign-in and the latest refresh (absent in sessions made before them). */
  readonly access?: AccessFacts;
}

/** The ID token's `sub`, `sid` (when the provider issues one) and `iat` (ms), from the sign-in. */
export interface ProviderSession {
  readonly sub: string;
  readonly sid?: string;
  readonly issuedAt?: number;
}

export interface SessionTokens {
  readonly accessToken?: string;
  readonly idToken?: string;
  readonly refreshToken?: string;
  /** OAuth 1.0a providers: the access token's secret. */
  readonly accessTokenSecret?: string;
  /** Access token expiry, ms since epoch. */
  readonly accessTokenExpiresAt?: number;
  /** DPoP: the session's private key its tokens are bound to (oidc/dpop-key.ts); never leaves the sealed record. */
  readonly dpopKey?: DpopKey;
}
