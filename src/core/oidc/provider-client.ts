// One OpenID Connect provider, through openid-client: discovery (cached),
// the authorization URL, code redemption with every check, refresh, and
// RP-initiated logout.
import * as oidc from 'openid-client';

import type { OidcProviderConfig } from '../config/auth-config.js';

/** The provider could not be reached or answered nonsense: the user sees 502. */
export class ProviderUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderUnavailableError';
  }
}

/** The provider refused (invalid_grant, bad token, failed ID token check): the user must sign in again. */
export class ProviderRefusedError extends Error {
  constructor(
    message: string,
    readonly oauthError?: string,
  ) {
    super(message);
    this.name = 'ProviderRefusedError';
  }
}

export interface TokenSet {
  readonly accessToken: string | undefined;
  readonly idToken: string | undefined;
  readonly refreshToken: string | undefined;
  /** ms since epoch */
  readonly accessTokenExpiresAt: number | undefined;
  /** Validated ID token claims (on refresh: the new ID token's, if one was issued). */
  readonly claims: Readonly<Record<string, unknown>> | undefined;
}

export interface AuthorizationRequest {
  readonly redirectUri: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
}

export interface CallbackChecks {
  readonly redirectUri: string;
  readonly state: string;
  readonly nonce: string | undefined;
  readonly codeVerifier: string;
}

const HTTP_TIMEOUT_SECONDS = 10;

function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Network failures and timeouts, as opposed to the provider saying no. */
function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return true;
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) return true;
  const cause = (error as { cause?: { code?: string } }).cause;
  return typeof cause?.code === 'string' && /^(ECONN|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|UND_ERR)/.test(cause.code);
}

function classify(error: unknown, during: string): Error {
  if (error instanceof ProviderUnavailableError || error instanceof ProviderRefusedError) return error;
  if (isUnreachable(error)) return new ProviderUnavailableError(`${during}: provider unreachable`);
  if (error instanceof oidc.ResponseBodyError) return new ProviderRefusedError(`${during}: provider answered ${error.error}`, error.error);
  if (error instanceof oidc.AuthorizationResponseError) return new ProviderRefusedError(`${during}: ${error.error}`, error.error);
  const message = error instanceof Error ? error.message : String(error);
  // Unexpected responses (HTML error pages, wrong content types) mean the provider is not working.
  if (/unexpected|content-type|json/i.test(message) && !/id_token|claim|nonce|state|signature|jwt/i.test(message)) {
    return new ProviderUnavailableError(`${during}: ${message}`);
  }
  return new ProviderRefusedError(`${during}: ${message}`);
}

export class OidcProviderClient {
  #configuration: Promise<oidc.Configuration> | undefined;

  constructor(readonly config: OidcProviderConfig) {}

  get alias(): string {
    return this.config.alias;
  }

  /** Discovered (or configured) metadata, cached; a failed discovery is retried on the next use. */
  configuration(): Promise<oidc.Configuration> {
    this.#configuration ??= this.#discover().catch((error: unknown) => {
      this.#configuration = undefined;
      throw classify(error, 'discovery');
    });
    return this.#configuration;
  }

  async #discover(): Promise<oidc.Configuration> {
    const { config } = this;
    const secret = config.clientSecret;
    if (config.discoveryUrl !== undefined) {
      const discovery = new URL(config.discoveryUrl);
      // Pass the issuer when the URL is the standard one, so openid-client validates the issuer it returns.
      const suffix = '/.well-known/openid-configuration';
      const issuer = discovery.pathname.endsWith(suffix) && discovery.search === '' ? new URL(discovery.href.slice(0, -suffix.length)) : discovery;
      const configuration = await oidc.discovery(issuer, config.clientId, secret, undefined, {
        timeout: HTTP_TIMEOUT_SECONDS,
        ...(isLoopback(discovery) ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
      return this.#withClientAuth(configuration);
    }
    const endpoints = config.endpoints!;
    const configuration = new oidc.Configuration(
      {
        issuer: endpoints.issuer,
        authorization_endpoint: endpoints.authorization,
        token_endpoint: endpoints.token,
        jwks_uri: endpoints.jwksUri,
        ...(endpoints.endSession ? { end_session_endpoint: endpoints.endSession } : {}),
      },
      config.clientId,
      secret,
    );
    configuration.timeout = HTTP_TIMEOUT_SECONDS;
    if (isLoopback(new URL(endpoints.token))) oidc.allowInsecureRequests(configuration);
    return this.#withClientAuth(configuration);
  }

  /** client_secret_basic when the provider supports it (most do), else client_secret_post; no secret: public client with PKCE. */
  #withClientAuth(configuration: oidc.Configuration): oidc.Configuration {
    const secret = this.config.clientSecret;
    if (secret === undefined) return new oidc.Configuration(configuration.serverMetadata(), this.config.clientId, undefined, oidc.None());
    const methods = configuration.serverMetadata().token_endpoint_auth_methods_supported;
    const auth = methods === undefined || methods.includes('client_secret_basic') ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret);
    const rebuilt = new oidc.Configuration(configuration.serverMetadata(), this.config.clientId, secret, auth);
    rebuilt.timeout = HTTP_TIMEOUT_SECONDS;
    if (isLoopback(new URL(configuration.serverMetadata().issuer))) oidc.allowInsecureRequests(rebuilt);
    return rebuilt;
  }

  async authorizationUrl(request: AuthorizationRequest): Promise<URL> {
    const configuration = await this.configuration();
    return oidc.buildAuthorizationUrl(configuration, {
      ...this.config.loginParameters,
      redirect_uri: request.redirectUri,
      response_type: 'code',
      scope: this.config.scopes.join(' '),
      state: request.state,
      nonce: request.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /** Redeems the code in `callbackUrl`: state, PKCE, and the ID token's signature, iss, aud, exp and nonce are all checked. */
  async redeem(callbackUrl: URL, checks: CallbackChecks): Promise<TokenSet> {
    try {
      const configuration = await this.configuration();
      const response = await oidc.authorizationCodeGrant(
        configuration,
        callbackUrl,
        {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          idTokenExpected: true,
          ...(checks.nonce !== undefined ? { expectedNonce: checks.nonce } : {}),
        },
        { redirect_uri: checks.redirectUri },
      );
      return this.#tokenSet(response);
    } catch (error) {
      throw classify(error, 'code redemption');
    }
  }

  async refresh(refreshToken: string): Promise<TokenSet> {
    try {
      const response = await oidc.refreshTokenGrant(await this.configuration(), refreshToken);
      const tokens = this.#tokenSet(response);
      // Providers that do not rotate refresh tokens omit them from the answer: keep the old one.
      return { ...tokens, refreshToken: tokens.refreshToken ?? refreshToken };
    } catch (error) {
      throw classify(error, 'refresh');
    }
  }

  #tokenSet(response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers): TokenSet {
    const expiresIn = response.expiresIn();
    return {
      accessToken: response.access_token,
      idToken: response.id_token,
      refreshToken: response.refresh_token,
      accessTokenExpiresAt: expiresIn === undefined ? undefined : Date.now() + expiresIn * 1000,
      claims: response.claims() as Record<string, unknown> | undefined,
    };
  }

  /** The provider's end-session URL, or undefined when it has none. */
  async endSessionUrl(parameters: { idTokenHint?: string; postLogoutRedirectUri: string; state: string }): Promise<URL | undefined> {
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
