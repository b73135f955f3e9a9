// One OpenID Connect provider, through openid-client: discovery (cached),
// the authorization URL, code redemption with every check, refresh, and
// RP-initiated logout. Also the provider's keys and JWT rules, for bearer
// tokens and ID tokens a client brings. Multi-tenant directories publish a
// templated issuer (`.../{tenantid}/v2.0`) that openid-client accepts only on
// one host; for them discovery, redemption and refresh are done here, with
// the same checks, the issuer taken from the token's own tenant.
import * as oidc from 'openid-client';

import type { JWTPayload } from 'jose';

import type { OidcProviderConfig } from '../config/provider-settings.js';
import { isThisMachine } from '../http/this-machine.js';
import { ProviderRefusedError, ProviderUnavailableError } from '../providers/errors.js';
import { refusalWithCode } from '../providers/oauth-error-code.js';
import type { AccountPrompt } from '../providers/provider.js';
import {
  boundedFetch,
  callProvider,
  expiryAfter,
  jsonAnswer,
  optionalString,
  stringField,
} from '../providers/provider-http.js';
import { InvalidTokenError } from '../tokens/errors.js';
import {
  asymmetricAlgorithms,
  validateJwt,
  type JwtExpectations,
  type JwtRules,
  type PeekedToken,
} from '../tokens/jwt-validator.js';
import { RemoteKeySet } from '../tokens/key-set.js';
import { ClientKey, ClientKeyError } from './client-key.js';
import { ClientSecretJwt } from './client-secret-jwt.js';
import { dpopKeyPair, newDpopKey, type DpopKey } from './dpop-key.js';
import { promptParameter } from './prompt-parameter.js';

export { ProviderRefusedError, ProviderUnavailableError };

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

export interface AuthorizationRequest {
  readonly redirectUri: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly prompt?: AccountPrompt;
}

export interface CallbackChecks {
  readonly redirectUri: string;
  readonly state: string;
  readonly nonce: string | undefined;
  readonly codeVerifier: string;
}

const HTTP_TIMEOUT_SECONDS = 10;

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

function classify(error: unknown, during: string): Error {
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

const TENANT_PLACEHOLDER = '{tenantid}';
/** A tenant id as it may appear in an issuer path segment. */
const TENANT_ID = /^[A-Za-z0-9-]{1,64}$/;

export class OidcProviderClient {
  #configuration: Promise<oidc.Configuration> | undefined;
  /** serverMetadata() copies on every call; the token path reads it once. */
  #metadata: oidc.ServerMetadata | undefined;
  /** Built once the metadata is known: the same for every token of this provider. */
  #jwtRules: JwtRules | undefined;
  readonly #clientSecretJwt: ClientSecretJwt | undefined;
  /** How the client authenticates at the token endpoint: openid-client's, also for the token requests made here. */
  #clientAuth: oidc.ClientAuth | undefined;
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
    this.#configuration ??= this.#discover().catch((error: unknown) => {
      this.#configuration = undefined;
      throw classify(
        error,
        this.config.discoveryUrl !== undefined ? `discovery (${this.config.discoveryUrl})` : 'discovery',
      );
    });
    return this.#configuration;
  }

  async #discover(): Promise<oidc.Configuration> {
    const { config } = this;
    if (this.#multiTenant) return this.#configure(await this.#discoverTemplated(config.discoveryUrl!));
    if (config.discoveryUrl !== undefined) {
      const discovery = new URL(config.discoveryUrl);
      // Pass the issuer when the URL is the standard one, so openid-client validates the issuer it returns.
      const suffix = '/.well-known/openid-configuration';
      const issuer =
        discovery.pathname.endsWith(suffix) && discovery.search === ''
          ? new URL(discovery.href.slice(0, -suffix.length))
          : discovery;
      const configuration = await oidc.discovery(issuer, config.clientId, config.clientSecret, undefined, {
        timeout: HTTP_TIMEOUT_SECONDS,
        [oidc.customFetch]: boundedFetch,
        ...(isThisMachine(discovery.host) ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
      return this.#configure(configuration.serverMetadata());
    }
    const endpoints = config.endpoints!;
    return this.#configure({
      issuer: endpoints.issuer,
      authorization_endpoint: endpoints.authorization,
      token_endpoint: endpoints.token,
      jwks_uri: endpoints.jwksUri,
      ...(endpoints.endSession ? { end_session_endpoint: endpoints.endSession } : {}),
    });
  }

  /** A multi-tenant directory's metadata: its issuer must be the tenant template on the configured origin. */
  async #discoverTemplated(url: string): Promise<oidc.ServerMetadata> {
    const metadata = jsonAnswer(
      await callProvider(url, { headers: { accept: 'application/json' } }, 'discovery'),
      'discovery',
    );
    const issuer = stringField(metadata, 'issuer', 'discovery');
    for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'])
      stringField(metadata, field, 'discovery');
    if (
      !issuer.includes(TENANT_PLACEHOLDER) ||
      new URL(issuer.replace(TENANT_PLACEHOLDER, 'x')).origin !== new URL(url).origin
    ) {
      throw new ProviderUnavailableError(
        `discovery: multi-tenant issuer "${issuer}" is not a tenant template on ${new URL(url).origin}`,
      );
    }
    return metadata as unknown as oidc.ServerMetadata;
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

  /**
   * The client's configuration: its private key (private_key_jwt, RFC 7523: openid-client signs
   * a new assertion, with its own `jti`, for each request), a signed client secret (renewed before
   * each use), or client_secret_post when configured (Easy Auth's clientCredential.method), else
   * client_secret_basic when the provider supports it (most do), else client_secret_post;
   * no secret: a public client with PKCE.
   */
  async #configure(discovered: oidc.ServerMetadata): Promise<oidc.Configuration> {
    const { clientId, clientSecret } = this.config;
    const endpoint = this.config.introspection?.endpoint;
    const metadata = endpoint === undefined ? discovered : { ...discovered, introspection_endpoint: endpoint };
    let auth: oidc.ClientAuth;
    const clientKey = await this.clientKey();
    if (clientKey !== undefined) {
      const tokenEndpoint = metadata.token_endpoint;
      const directory = this.config.kind === 'aad';
      auth = oidc.PrivateKeyJwt(clientKey.privateKey, {
        [oidc.modifyAssertion]: (header, payload) => {
          // Microsoft's directory names the certificate by its thumbprint, and takes the token endpoint as audience.
          Object.assign(header, clientKey.certificateHeader);
          if (directory && tokenEndpoint !== undefined) payload.aud = tokenEndpoint;
        },
      });
    } else if (this.#clientSecretJwt !== undefined) {
      const signed = this.#clientSecretJwt;
      auth = (_as, _client, body) => {
        body.set('client_id', clientId);
        body.set('client_secret', signed.current());
      };
    } else if (clientSecret === undefined) {
      auth = oidc.None();
    } else {
      const methods = metadata.token_endpoint_auth_methods_supported;
      const basic =
        this.config.secretInBody !== true && (methods === undefined || methods.includes('client_secret_basic'));
      auth = basic ? oidc.ClientSecretBasic(clientSecret) : oidc.ClientSecretPost(clientSecret);
    }
    this.#clientAuth = auth;
    const configuration = new oidc.Configuration(metadata, clientId, clientSecret, auth);
    configuration.timeout = HTTP_TIMEOUT_SECONDS;
    configuration[oidc.customFetch] = boundedFetch;
    if (isThisMachine(new URL(metadata.token_endpoint ?? metadata.issuer.replace(TENANT_PLACEHOLDER, 'x')).host))
      oidc.allowInsecureRequests(configuration);
    return configuration;
  }

  /**
   * Where the browser goes to sign in. With pushed authorization requests (RFC 9126: configured, or
   * required by the provider's metadata), the parameters are first posted to the provider, with
   * the client's credentials, and the URL carries only the client id and the `request_uri` it answers.
   */
  async authorizationUrl(request: AuthorizationRequest): Promise<URL> {
    try {
      return await this.#authorizationUrl(request);
    } catch (error) {
      throw classify(error, 'pushed authorization request');
    }
  }

  async #authorizationUrl(request: AuthorizationRequest): Promise<URL> {
    const configuration = await this.configuration();
    const metadata = configuration.serverMetadata();
    const { prompt_values_supported: supported } = metadata;
    const prompt = promptParameter(
      this.config.kind,
      this.config.loginParameters.prompt,
      request.prompt,
      Array.isArray(supported) ? supported.map(String) : undefined,
    );
    const pushed = this.config.pushedAuthorizationRequests ?? metadata.require_pushed_authorization_requests === true;
    if (pushed && metadata.pushed_authorization_request_endpoint === undefined)
      throw new ProviderRefusedError(
        'pushed authorization requests are configured, and the provider has no pushed_authorization_request_endpoint',
      );
    const parameters = {
      ...this.config.loginParameters,
      ...(prompt !== undefined ? { prompt } : {}),
      redirect_uri: request.redirectUri,
      response_type: 'code',
      ...(this.config.responseMode === 'form_post' ? { response_mode: 'form_post' } : {}),
      scope: this.config.scopes.join(' '),
      state: request.state,
      nonce: request.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
      code_challenge_method: 'S256',
    };
    if (!pushed) return oidc.buildAuthorizationUrl(configuration, parameters);
    await this.#clientSecretJwt?.renew();
    return await oidc.buildAuthorizationUrlWithPAR(configuration, parameters);
  }

  /** Redeems the code in `callbackUrl`: state, PKCE, and the ID token's signature, iss, aud, exp and nonce are all checked. */
  async redeem(callbackUrl: URL, checks: CallbackChecks): Promise<TokenSet> {
    try {
      const configuration = await this.configuration();
      await this.#clientSecretJwt?.renew();
      if (this.#multiTenant) {
        if (callbackUrl.searchParams.get('state') !== checks.state)
          throw new ProviderRefusedError('code redemption: state mismatch');
        const code = callbackUrl.searchParams.get('code') ?? '';
        return await this.#ownGrant(
          configuration,
          {
            grant_type: 'authorization_code',
            code,
            redirect_uri: checks.redirectUri,
            code_verifier: checks.codeVerifier,
          },
          checks.nonce,
          true,
        );
      }
      // DPoP: a new key for the new session, every proof of its token requests signed with it.
      const dpop = this.config.dpop === true ? await newDpopKey() : undefined;
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
        dpop !== undefined ? { DPoP: oidc.getDPoPHandle(configuration, dpop.keyPair) } : {},
      );
      return { ...this.#tokenSet(response), ...(dpop !== undefined ? { dpopKey: dpop.jwk } : {}) };
    } catch (error) {
      throw classify(error, 'code redemption');
    }
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
      throw classify(error, 'userinfo');
    }
  }

  /** A refresh with the session's DPoP key, when it has one (the provider then requires a proof made with it). */
  async refresh(refreshToken: string, dpopKey?: DpopKey): Promise<TokenSet> {
    try {
      const configuration = await this.configuration();
      await this.#clientSecretJwt?.renew();
      const tokens = this.#multiTenant
        ? await this.#ownGrant(
            configuration,
            { grant_type: 'refresh_token', refresh_token: refreshToken },
            undefined,
            false,
          )
        : this.#tokenSet(
            await oidc.refreshTokenGrant(
              configuration,
              refreshToken,
              undefined,
              await this.#dpop(configuration, dpopKey),
            ),
          );
      // Providers that do not rotate refresh tokens omit them from the answer: keep the old one.
      return {
        ...tokens,
        refreshToken: tokens.refreshToken ?? refreshToken,
        ...(dpopKey !== undefined ? { dpopKey } : {}),
      };
    } catch (error) {
      throw classify(error, 'refresh');
    }
  }

  /** Client-directed: a code the client obtained itself (its own redirect URI and PKCE verifier, if any). */
  async redeemClientCode(
    code: string,
    redirectUri: string | undefined,
    codeVerifier: string | undefined,
  ): Promise<TokenSet> {
    try {
      const configuration = await this.configuration();
      await this.#clientSecretJwt?.renew();
      const parameters = {
        code,
        ...(redirectUri !== undefined ? { redirect_uri: redirectUri } : {}),
        ...(codeVerifier !== undefined ? { code_verifier: codeVerifier } : {}),
      };
      if (this.#multiTenant)
        return await this.#ownGrant(
          configuration,
          { grant_type: 'authorization_code', ...parameters },
          undefined,
          true,
        );
      // openid-client's request and checks (iss, aud, exp of the ID token); its signature checked here too.
      const response = await oidc.genericGrantRequest(configuration, 'authorization_code', parameters);
      if (response.id_token === undefined) throw new ProviderRefusedError('token request: no ID token');
      const claims = await this.validateJwt(response.id_token, { audiences: [this.config.clientId] });
      return { ...this.#tokenSet(response), claims };
    } catch (error) {
      throw classify(error, 'token exchange');
    }
  }

  /**
   * A token request for templated issuers, whose ID tokens openid-client cannot check (their
   * issuer is the token's own tenant's): the client authenticates as openid-client has it do
   * (#clientAuth), and the ID token is checked by validateJwt.
   */
  async #ownGrant(
    configuration: oidc.Configuration,
    parameters: Record<string, string>,
    nonce: string | undefined,
    idTokenExpected: boolean,
  ): Promise<TokenSet> {
    const metadata = configuration.serverMetadata();
    const body = new URLSearchParams({ ...parameters, client_id: this.config.clientId });
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
    await this.#clientAuth!(metadata, { client_id: this.config.clientId }, body, headers);
    const answer = await callProvider(
      metadata.token_endpoint!,
      { method: 'POST', headers: Object.fromEntries(headers), body: body.toString() },
      'token request',
    );
    const response = jsonAnswer(answer, 'token request');
    if (String(response.token_type ?? '').toLowerCase() !== 'bearer')
      throw new ProviderRefusedError('token request: token_type is not Bearer');
    const idToken = optionalString(response, 'id_token');
    if (idTokenExpected && idToken === undefined) throw new ProviderRefusedError('token request: no ID token');
    const claims =
      idToken === undefined
        ? undefined
        : await this.validateJwt(idToken, {
            audiences: [this.config.clientId],
            ...(nonce !== undefined ? { nonce } : {}),
          });
    return {
      accessToken: optionalString(response, 'access_token'),
      idToken,
      refreshToken: optionalString(response, 'refresh_token'),
      accessTokenExpiresAt: expiryAfter(response.expires_in, this.now()),
      claims,
    };
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
      throw classify(error, 'introspection');
    }
  }

  /** The DPoP option of a request made for a session with `dpopKey` (none without one). */
  async #dpop(configuration: oidc.Configuration, dpopKey: DpopKey | undefined): Promise<oidc.DPoPOptions> {
    if (dpopKey === undefined) return {};
    return { DPoP: oidc.getDPoPHandle(configuration, await dpopKeyPair(dpopKey)) };
  }

  /** The issuer a token of this provider must carry: the configured one, or the template filled with the token's own tenant. */
  expectedIssuer(metadata: oidc.ServerMetadata, unverified: JWTPayload): string | undefined {
    if (!this.#multiTenant) return metadata.issuer;
    const tid = unverified.tid;
    if (typeof tid !== 'string' || !TENANT_ID.test(tid)) return undefined;
    const allowed = this.config.directory?.allowedTenants ?? [];
    if (allowed.length > 0 && !allowed.includes(tid)) return undefined;
    return metadata.issuer.replace(TENANT_PLACEHOLDER, tid);
  }

  async #serverMetadata(): Promise<oidc.ServerMetadata> {
    const configuration = await this.configuration();
    this.#metadata ??= configuration.serverMetadata();
    return this.#metadata;
  }

  /** Whether `issuer` could be this provider's (before any signature work). */
  async acceptsIssuer(issuer: string): Promise<boolean> {
    const metadata = this.#metadata ?? (await this.#serverMetadata());
    if (!this.#multiTenant) return issuer === metadata.issuer;
    const [before, after] = metadata.issuer.split(TENANT_PLACEHOLDER) as [string, string];
    return issuer.length > before.length + after.length && issuer.startsWith(before) && issuer.endsWith(after);
  }

  /** A JWT of this provider: keys, algorithms and issuer from its metadata. Throws InvalidTokenError. */
  validateJwt(token: string, expected: JwtExpectations, peeked?: PeekedToken): Promise<JWTPayload> {
    const metadata = this.#metadata;
    if (metadata === undefined) return this.#serverMetadata().then(() => this.validateJwt(token, expected, peeked));
    this.#jwtRules ??= {
      keys: this.keys,
      algorithms: asymmetricAlgorithms(metadata.id_token_signing_alg_values_supported),
      issuer: (unverified) => this.expectedIssuer(metadata, unverified),
      now: this.now,
    };
    return validateJwt(token, this.#jwtRules, expected, peeked);
  }

  #tokenSet(response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers): TokenSet {
    const expiresIn = response.expiresIn();
    return {
      accessToken: response.access_token,
      idToken: response.id_token,
      refreshToken: response.refresh_token,
      accessTokenExpiresAt: expiryAfter(expiresIn, this.now()),
      claims: response.claims() as Record<string, unknown> | undefined,
    };
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
