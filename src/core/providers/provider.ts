// One identity provider, whatever its protocol (OpenID Connect, OAuth 2.0,
// OAuth 1.0a): how a sign-in starts and finishes, how its tokens refresh,
// how a client-obtained token is checked. The routes know only this.

import type { AccessFacts } from '../authorization/access-facts.js';
import type { ProviderConfig } from '../config/provider-settings.js';
import type { Claim } from '../identity.js';
import type { DpopKey } from '../oidc/dpop-key.js';
import type { LogoutNotice } from '../oidc/logout-token.js';
import type { ProviderSession, SessionTokens } from '../session/record.js';
import type { PeekedToken } from '../tokens/jwt-validator.js';

/** What a provider established about the user. */
export interface SignIn {
  /** -ID */
  readonly userId: string;
  /** -NAME */
  readonly userName: string;
  /** principal.name_typ: the claim type that names the user. */
  readonly nameType: string;
  /** principal.role_typ */
  readonly roleType: string;
  readonly claims: readonly Claim[];
  readonly tokens: SessionTokens;
  /** End of the provider's assertion (ID token `exp`), ms; for IdentityProviderDerived cookies. */
  readonly assertionExpiresAt?: number;
  /** OpenID providers: the sign-in as the provider's back-channel logout will name it. */
  readonly providerSession?: ProviderSession;
  /** What authorization rules look at: verified address, groups, roles, claims. */
  readonly access?: AccessFacts;
}

/**
 * What a sign-in asks the provider to do before it picks the account: `select_account`, let the
 * person choose (or add) an account; `login`, have them enter their credentials again. Either way,
 * a provider session of another account is not simply reused. Each provider says it in its own way.
 */
export type AccountPrompt = 'login' | 'select_account';

export const ACCOUNT_PROMPTS: readonly AccountPrompt[] = ['login', 'select_account'];

export interface LoginStart {
  readonly redirectUri: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly prompt?: AccountPrompt;
}

export interface LoginBegun {
  readonly url: URL;
  /** Per-login values the callback needs (e.g. an OAuth 1.0a request-token secret); sealed in the transaction cookie. */
  readonly saved?: Readonly<Record<string, string>>;
  /** What the provider's callback will carry to name this login; default: OAuth 2.0's `state`. */
  readonly correlation?: string;
}

export interface LoginCallback extends LoginStart {
  /** The callback's query or form parameters. */
  readonly params: URLSearchParams;
  /** The nonce to require in the ID token, or undefined when nonce validation is off. */
  readonly expectedNonce: string | undefined;
  readonly saved: Readonly<Record<string, string>>;
}

/** The token set a refresh returns. */
export interface RefreshedTokens {
  readonly accessToken: string | undefined;
  readonly idToken: string | undefined;
  readonly refreshToken: string | undefined;
  readonly accessTokenExpiresAt: number | undefined;
  /** DPoP: the session's key, kept with its tokens. */
  readonly dpopKey?: DpopKey;
  /** The facts rules look at, read again (a new ID token's claims): absent, the session keeps what it had. */
  readonly access?: AccessFacts;
}

/** The body of `POST /.auth/login/<provider>` (client-directed sign-in). */
export interface TokenExchange {
  readonly accessToken?: string;
  readonly accessTokenSecret?: string;
  readonly idToken?: string;
  readonly authorizationCode?: string;
  readonly redirectUri?: string;
  readonly codeVerifier?: string;
}

/** A provider whose tokens are JWTs the layer can check itself. */
export interface BearerValidation {
  /** Whether a token claiming this issuer may be this provider's (checked before any signature work). */
  acceptsIssuer(issuer: string): Promise<boolean>;
  /** Signature, iss, aud, exp/nbf, algorithm; then the provider's own policy. Throws InvalidTokenError or TokenForbiddenError. */
  validate(token: string, peeked?: PeekedToken): Promise<SignIn & { readonly expiresAt: number }>;
  /** Whether opaque tokens (not JWTs) are checked at the provider now: `introspect` may be asked. */
  introspects?(): Promise<boolean>;
  /**
   * An opaque token, as the provider's introspection tells it (then the provider's own policy).
   * Throws InvalidTokenError, TokenForbiddenError, or ProviderUnavailableError (the endpoint is down).
   */
  introspect?(token: string): Promise<SignIn & { readonly expiresAt: number }>;
}

export interface Provider {
  readonly alias: string;
  /** What sign-in pages call it ("Sign in with GitHub"). */
  readonly displayName: string;
  readonly kind: ProviderConfig['kind'];
  readonly fingerprint: string;
  /** `form_post`: the callback arrives as a cross-site POST. */
  readonly responseMode: 'query' | 'form_post';
  begin(start: LoginStart): Promise<LoginBegun>;
  /**
   * The value a callback carries to name its login (LoginBegun.correlation), undefined when it carries none;
   * default: the `state` parameter. Selects the login's transaction cookie, so sign-ins in several tabs do not collide.
   */
  callbackCorrelation?(params: URLSearchParams): string | undefined;
  /** Checks the callback (state or request token), redeems it, returns the user. Throws ProviderRefusedError / ProviderUnavailableError. */
  complete(callback: LoginCallback): Promise<SignIn>;
  /** Absent for providers that issue no refresh tokens. `tokens`: the session's (its DPoP key). */
  refresh?(refreshToken: string, tokens?: SessionTokens): Promise<RefreshedTokens>;
  /** The provider's end-session URL (RP-initiated logout), when it has one. */
  endSessionUrl?(parameters: {
    idTokenHint?: string;
    postLogoutRedirectUri: string;
    state: string;
  }): Promise<URL | undefined>;
  /**
   * OpenID providers: checks a back-channel logout token (signature, iss, aud, exp, and the
   * logout event); says whose sign-ins ended at the provider. Throws InvalidTokenError.
   */
  verifyLogoutToken?(token: string): Promise<LogoutNotice>;
  /** Client-directed sign-in with a token the client obtained itself. Throws ProviderRefusedError when it is not good. */
  exchange(request: TokenExchange): Promise<SignIn>;
  readonly bearer?: BearerValidation;
  /**
   * OpenID providers: fetches what sign-ins will need (the discovery document), so that a provider
   * that cannot be reached is said at start, not at the first sign-in. Rejects with why.
   */
  prepare?(): Promise<void>;
  /** Where `prepare` fetches from, for the log (no secret is part of it). */
  readonly discoveryUrl?: string;
}
