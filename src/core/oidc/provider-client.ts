// One OpenID Connect provider, through openid-client: its metadata (cached),
// the authorization URL, code redemption with every check, refresh, userinfo,
// introspection and RP-initiated logout. Also the provider's keys and JWT
// rules, for bearer tokens and ID tokens a client brings. A multi-tenant
// directory's token requests are openid-client's too; their ID tokens, whose
// issuer is the token's own tenant's, are checked here (id-token-aside.ts).
import * as oidc from 'openid-client';

import type { JWTPayload } from 'jose';

import type { OidcProviderConfig } from '../config/provider-settings.js';
import { constantTimeEqual } from '../crypto/equal.js';
import { ProviderRefusedError, ProviderUnavailableError } from '../providers/errors.js';
import {
  asymmetricAlgorithms,
  validateJwt,
  type JwtExpectations,
  type JwtRules,
  type PeekedToken,
} from '../tokens/jwt-validator.js';
import { RemoteKeySet } from '../tokens/key-set.js';
import { authorizationUrl, type AuthorizationRequest } from './authorization-request.js';
import { clientAuthentication } from './client-authentication.js';
import { clientConfiguration } from './client-configuration.js';
import { ClientKey, ClientKeyError } from './client-key.js';
import { ClientSecretJwt } from './client-secret-jwt.js';
import { dpopKeyPair, newDpopKey, type DpopKey } from './dpop-key.js';
import { IdTokenAside } from './id-token-aside.js';
import { checkIdTokenClaims } from './id-token-claims.js';
import { providerFailure } from './provider-failure.js';
import { providerMetadata } from './provider-metadata.js';
import { checkSameSignIn } from './refreshed-id-token.js';
import { fitsTenantTemplate, tenantIssuer } from './tenant-issuer.js';
import { tokenSetOf, type TokenAnswer, type TokenSet } from './token-set.js';

export { ProviderRefusedError, ProviderUnavailableError };
export type { AuthorizationRequest, TokenSet };

export interface CallbackChecks {
  readonly redirectUri: string;
  readonly state: string;
  readonly nonce: string | undefined;
  readonly codeVerifier: string;
}

/** The configuration of one token request, and where its ID token goes when openid-client cannot check it. */
interface TokenRequest {
  readonly configuration: oidc.Configuration;
  readonly aside: IdTokenAside | undefined;
}

/** What a token answer's ID token must be: there at all, and checked by validateJwt even where openid-client checked it. */
interface IdTokenRule {
  readonly required: boolean;
  readonly signatureChecked: boolean;
  readonly nonce?: string;
}

export class OidcProviderClient {
  #configuration: Promise<oidc.Configuration> | undefined;
  /** The metadata and client authentication the configuration was made of, for the per-request ones. */
  #made: { readonly metadata: oidc.ServerMetadata; readonly auth: oidc.ClientAuth } | undefined;
  /** serverMetadata() copies on every call; the token path reads it once. */
  #metadata: oidc.ServerMetadata | undefined;
  /** Built once the metadata is known: the same for every token of this provider. */
  #jwtRules: JwtRules | undefined;
  readonly #clientSecretJwt: ClientSecretJwt | undefined;
  /** private_key_jwt: the client's key, read once (the configuration checked it at start). */
  #clientKey: Promise<ClientKey> | undefined;
  readonly keys: RemoteKeySet;

  constructor(
    readonly config: OidcProviderConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.#clientSecretJwt = config.signedClientSecret
      ? new ClientSecretJwt(config.signedClientSecret, config.clientId, now)
      : undefined;
    this.keys = new RemoteKeySet(async () => {
      const uri = (await this.configuration()).serverMetadata().jwks_uri;
      if (uri === undefined) throw new ProviderUnavailableError('discovery: no jwks_uri');
      return uri;
    }, now);
  }

  get alias(): string {
    return this.config.alias;
  }

  get #multiTenant(): boolean {
    return this.config.directory?.multiTenant === true;
  }

  /** Discovered (or configured) metadata, cached; a failed discovery is retried on the next use. */
  configuration(): Promise<oidc.Configuration> {
    this.#configuration ??= this.#configure().catch((error: unknown) => {
      this.#configuration = undefined;
      const { discoveryUrl } = this.config;
      throw providerFailure(error, discoveryUrl !== undefined ? `discovery (${discoveryUrl})` : 'discovery');
    });
    return this.#configuration;
  }

  async #configure(): Promise<oidc.Configuration> {
    const metadata = await providerMetadata(this.config);
    const auth = clientAuthentication(this.config, metadata, await this.clientKey(), this.#clientSecretJwt);
    this.#made = { metadata, auth };
    return clientConfiguration(metadata, this.config, auth);
  }

  /** The client's own key (private_key_jwt), when it has one. */
  clientKey(): Promise<ClientKey> | undefined {
    const settings = this.config.clientKey;
    if (settings === undefined) return undefined;
    this.#clientKey ??= ClientKey.load(settings).catch((error: unknown) => {
      this.#clientKey = undefined;
      if (error instanceof ClientKeyError) throw new ProviderUnavailableError(`client key: ${error.message}`);
      throw error;
    });
    return this.#clientKey;
  }

  /** Where the browser goes to sign in (authorization-request.ts). */
  async authorizationUrl(request: AuthorizationRequest): Promise<URL> {
    try {
      return await authorizationUrl(await this.configuration(), this.config, request, async () => {
        await this.#clientSecretJwt?.renew();
      });
    } catch (error) {
      throw providerFailure(error, 'pushed authorization request');
    }
  }

  /**
   * Redeems the code in `callbackUrl`: state, PKCE, and the ID token's iss, aud, exp, sub, iat and
   * nonce are all checked; its signature where gatehouse reads it (openid-client takes an ID token
   * straight from the token endpoint on the strength of TLS, OpenID Connect Core §3.1.3.7). The
   * nonce is not checked when `checks` has none (login.nonce.validateNonce: false), which
   * openid-client cannot leave out (it then refuses any nonce): that ID token is taken aside.
   */
  async redeem(callbackUrl: URL, checks: CallbackChecks): Promise<TokenSet> {
    try {
      const request = await this.#tokenRequest(checks.nonce === undefined);
      // DPoP: a new key for the new session, every proof of its token requests signed with it.
      const dpop = this.config.dpop === true ? await newDpopKey() : undefined;
      const options: oidc.DPoPOptions =
        dpop !== undefined ? { DPoP: oidc.getDPoPHandle(request.configuration, dpop.keyPair) } : {};
      const tokens =
        request.aside === undefined
          ? await this.#redemption(request.configuration, callbackUrl, checks, options)
          : await this.#templatedRedemption(request, callbackUrl, checks, options);
      return { ...tokens, ...(dpop !== undefined ? { dpopKey: dpop.jwk } : {}) };
    } catch (error) {
      throw providerFailure(error, 'code redemption');
    }
  }

  /** openid-client's code redemption, every check of the callback and the ID token its own. */
  async #redemption(
    configuration: oidc.Configuration,
    callbackUrl: URL,
    checks: CallbackChecks,
    options: oidc.DPoPOptions,
  ): Promise<TokenSet> {
    const answer = await oidc.authorizationCodeGrant(
      configuration,
      callbackUrl,
      {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        idTokenExpected: true,
        ...(checks.nonce !== undefined ? { expectedNonce: checks.nonce } : {}),
      },
      { redirect_uri: checks.redirectUri },
      options,
    );
    return tokenSetOf(answer, this.now());
  }

  /**
   * A code redemption whose ID token is taken aside: a multi-tenant directory's (openid-client's
   * authorizationCodeGrant compares the callback's `iss`, RFC 9207, with the tenant template) or
   * one whose nonce is not checked. The callback is checked here (the state, and the `iss` against
   * the ID token's issuer) and the code redeemed by openid-client's genericGrantRequest.
   */
  async #templatedRedemption(
    request: TokenRequest,
    callbackUrl: URL,
    checks: CallbackChecks,
    options: oidc.DPoPOptions,
  ): Promise<TokenSet> {
    const callback = callbackUrl.searchParams;
    if (!constantTimeEqual(callback.get('state') ?? '', checks.state))
      throw new ProviderRefusedError('code redemption: state mismatch');
    const parameters = {
      code: callback.get('code') ?? '',
      redirect_uri: checks.redirectUri,
      code_verifier: checks.codeVerifier,
    };
    const answer = await oidc.genericGrantRequest(request.configuration, 'authorization_code', parameters, options);
    const rule = {
      required: true,
      signatureChecked: true,
      ...(checks.nonce !== undefined ? { nonce: checks.nonce } : {}),
    };
    const tokens = await this.#checkedTokens(answer, request, rule);
    const issuer = callback.get('iss');
    const advertised = request.configuration.serverMetadata().authorization_response_iss_parameter_supported === true;
    if (issuer === null ? advertised : issuer !== tokens.claims?.iss)
      throw new ProviderRefusedError('code redemption: the callback iss is not the ID token issuer');
    return tokens;
  }

  /**
   * The claims of the provider's userinfo endpoint for `accessToken`, or undefined when the provider
   * has none. Its `sub` must be `expectedSubject` (OpenID Connect Core §5.3.2): another refuses.
   */
  async userInfo(
    accessToken: string,
    expectedSubject: string,
    dpopKey?: DpopKey,
  ): Promise<Readonly<Record<string, unknown>> | undefined> {
    try {
      const configuration = await this.configuration();
      if (configuration.serverMetadata().userinfo_endpoint === undefined) return undefined;
      return await oidc.fetchUserInfo(
        configuration,
        accessToken,
        expectedSubject,
        await this.#dpop(configuration, dpopKey),
      );
    } catch (error) {
      throw providerFailure(error, 'userinfo');
    }
  }

  /**
   * A refresh with the session's DPoP key, when it has one (the provider then requires a proof made
   * with it). A new ID token must be of the sign-in of `previousIdToken`, the session's (its iss and sub).
   */
  async refresh(refreshToken: string, dpopKey?: DpopKey, previousIdToken?: string): Promise<TokenSet> {
    try {
      const request = await this.#tokenRequest();
      const answer = await oidc.refreshTokenGrant(
        request.configuration,
        refreshToken,
        undefined,
        await this.#dpop(request.configuration, dpopKey),
      );
      const tokens = await this.#checkedTokens(answer, request, { required: false, signatureChecked: false });
      if (tokens.claims !== undefined && previousIdToken !== undefined) checkSameSignIn(tokens.claims, previousIdToken);
      // Providers that do not rotate refresh tokens omit them from the answer: keep the old one.
      return {
        ...tokens,
        refreshToken: tokens.refreshToken ?? refreshToken,
        ...(dpopKey !== undefined ? { dpopKey } : {}),
      };
    } catch (error) {
      throw providerFailure(error, 'refresh');
    }
  }

  /** Client-directed: a code the client obtained itself (its own redirect URI and PKCE verifier, if any). */
  async redeemClientCode(
    code: string,
    redirectUri: string | undefined,
    codeVerifier: string | undefined,
  ): Promise<TokenSet> {
    try {
      const request = await this.#tokenRequest();
      const parameters = {
        code,
        ...(redirectUri !== undefined ? { redirect_uri: redirectUri } : {}),
        ...(codeVerifier !== undefined ? { code_verifier: codeVerifier } : {}),
      };
      // openid-client's request and checks (iss, aud, exp of the ID token); its signature checked here too.
      const answer = await oidc.genericGrantRequest(request.configuration, 'authorization_code', parameters);
      return await this.#checkedTokens(answer, request, { required: true, signatureChecked: true });
    } catch (error) {
      throw providerFailure(error, 'token exchange');
    }
  }

  /**
   * The configuration of a token request, with the client's credentials ready. A multi-tenant
   * directory's, or one `withIdTokenAside`, is made for the one request, its ID token taken aside
   * (id-token-aside.ts) and checked by #checkedTokens.
   */
  async #tokenRequest(withIdTokenAside = false): Promise<TokenRequest> {
    const configuration = await this.configuration();
    await this.#clientSecretJwt?.renew();
    if (!this.#multiTenant && !withIdTokenAside) return { configuration, aside: undefined };
    const { metadata, auth } = this.#made!;
    const aside = new IdTokenAside();
    return { configuration: clientConfiguration(metadata, this.config, auth, aside.fetch), aside };
  }

  /** The tokens of `answer`; its ID token as `rule` has it, validateJwt checking what openid-client did not. */
  async #checkedTokens(answer: TokenAnswer, request: TokenRequest, rule: IdTokenRule): Promise<TokenSet> {
    const tokens = tokenSetOf(answer, this.now());
    const idToken = request.aside?.idToken ?? tokens.idToken;
    if (idToken === undefined) {
      if (rule.required) throw new ProviderRefusedError('token request: no ID token');
      return tokens;
    }
    if (request.aside === undefined && !rule.signatureChecked) return tokens;
    const claims = await this.validateJwt(idToken, {
      audiences: [this.config.clientId],
      ...(rule.nonce !== undefined ? { nonce: rule.nonce } : {}),
    });
    // What openid-client requires of the ID tokens it reads (sub, iat, azp), of this one too.
    checkIdTokenClaims(claims, this.config.clientId);
    return { ...tokens, idToken, claims };
  }

  /**
   * Whether opaque bearer tokens are introspected: configured so (the default, with the client's
   * credentials) and the provider has an introspection endpoint (its metadata's, or configured).
   */
  async introspects(): Promise<boolean> {
    if (this.config.introspection?.enabled !== true) return false;
    return (await this.configuration()).serverMetadata().introspection_endpoint !== undefined;
  }

  /**
   * The provider's introspection answer for `token` (RFC 7662), asked with this client's own
   * credentials. Throws ProviderUnavailableError when the endpoint cannot be reached or answers
   * nonsense, ProviderRefusedError when it answers an error.
   */
  async introspect(token: string): Promise<Readonly<Record<string, unknown>>> {
    try {
      const configuration = await this.configuration();
      await this.#clientSecretJwt?.renew();
      return await oidc.tokenIntrospection(configuration, token, { token_type_hint: 'access_token' });
    } catch (error) {
      throw providerFailure(error, 'introspection');
    }
  }

  /** The DPoP option of a request made for a session with `dpopKey` (none without one). */
  async #dpop(configuration: oidc.Configuration, dpopKey: DpopKey | undefined): Promise<oidc.DPoPOptions> {
    if (dpopKey === undefined) return {};
    return { DPoP: oidc.getDPoPHandle(configuration, await dpopKeyPair(dpopKey)) };
  }

  /** The issuer a token of this provider must carry: the configured one, or the template filled with the token's own tenant. */
  #expectedIssuer(metadata: oidc.ServerMetadata, unverified: JWTPayload): string | undefined {
    if (!this.#multiTenant) return metadata.issuer;
    return tenantIssuer(metadata.issuer, unverified, this.config.directory?.allowedTenants ?? []);
  }

  async #serverMetadata(): Promise<oidc.ServerMetadata> {
    const configuration = await this.configuration();
    this.#metadata ??= configuration.serverMetadata();
    return this.#metadata;
  }

  /** Whether `issuer` could be this provider's (before any signature work). */
  async acceptsIssuer(issuer: string): Promise<boolean> {
    const metadata = this.#metadata ?? (await this.#serverMetadata());
    return this.#multiTenant ? fitsTenantTemplate(metadata.issuer, issuer) : issuer === metadata.issuer;
  }

  /** A JWT of this provider: keys, algorithms and issuer from its metadata. Throws InvalidTokenError. */
  validateJwt(token: string, expected: JwtExpectations, peeked?: PeekedToken): Promise<JWTPayload> {
    const metadata = this.#metadata;
    if (metadata === undefined) return this.#serverMetadata().then(() => this.validateJwt(token, expected, peeked));
    this.#jwtRules ??= {
      keys: this.keys,
      algorithms: asymmetricAlgorithms(metadata.id_token_signing_alg_values_supported),
      issuer: (unverified) => this.#expectedIssuer(metadata, unverified),
      now: this.now,
    };
    return validateJwt(token, this.#jwtRules, expected, peeked);
  }

  /** The provider's end-session URL, or undefined when it has none. */
  async endSessionUrl(parameters: {
    idTokenHint?: string;
    postLogoutRedirectUri: string;
    state: string;
  }): Promise<URL | undefined> {
    const configuration = await this.configuration();
    if (configuration.serverMetadata().end_session_endpoint === undefined) return undefined;
    return oidc.buildEndSessionUrl(configuration, {
      post_logout_redirect_uri: parameters.postLogoutRedirectUri,
      state: parameters.state,
      client_id: this.config.clientId,
      ...(parameters.idTokenHint ? { id_token_hint: parameters.idTokenHint } : {}),
    });
  }
}
