// The OpenID Connect providers: custom ones, the enterprise directory (aad),
// the consumer web provider (google) and the device maker (apple). One
// protocol (openid-client underneath); what differs is configuration and
// which claims fill -ID and -NAME.
import type { JWTPayload } from 'jose';

import type { AccessFacts } from '../authorization/access-facts.js';
import { accessFromBearerClaims, accessFromClaims, graphLookupFailedMessage } from '../authorization/claims-access.js';
import type { OidcProviderConfig } from '../config/provider-settings.js';
import { OidcProviderClient } from '../oidc/provider-client.js';
import { claimList, userNameFrom } from '../principal.js';
import { isSendable } from '../identity.js';
import { logoutNotice, type LogoutNotice } from '../oidc/logout-token.js';
import { introspectedClaims, trustedUntil } from '../tokens/introspection.js';
import type { ProviderSession, SessionTokens } from '../session/record.js';
import { TokenForbiddenError, InvalidTokenError } from '../tokens/errors.js';
import type { PeekedToken } from '../tokens/jwt-validator.js';
import { authorizationCode } from './authorization-callback.js';
import { ConfiguredProvider } from './configured-provider.js';
import { ProviderRefusedError } from './errors.js';
import { graphGroupIds, GraphGroupsError } from './graph-groups.js';
import type {
  BearerValidation,
  LoginBegun,
  LoginCallback,
  LoginStart,
  Provider,
  RefreshedTokens,
  SignIn,
  TokenExchange,
} from './provider.js';

/** Apple's `user` form field (first sign-in only) is small JSON; anything else is ignored. */
const MAX_APPLE_USER_FIELD = 4096;

/** The tokens of a token response that a session keeps (absent ones left out). */
function storedTokens(tokens: RefreshedTokens): SessionTokens {
  return {
    ...(tokens.accessToken !== undefined ? { accessToken: tokens.accessToken } : {}),
    ...(tokens.idToken !== undefined ? { idToken: tokens.idToken } : {}),
    ...(tokens.refreshToken !== undefined ? { refreshToken: tokens.refreshToken } : {}),
    ...(tokens.accessTokenExpiresAt !== undefined ? { accessTokenExpiresAt: tokens.accessTokenExpiresAt } : {}),
    ...(tokens.dpopKey !== undefined ? { dpopKey: tokens.dpopKey } : {}),
  };
}

/** `signIn` with the provider's names for it (ID-token `sub`, `sid`, `iat`), which a back-channel logout names again. */
function withProviderSession<S extends SignIn>(signIn: S, claims: Readonly<Record<string, unknown>>): S {
  const { sub, sid, iat } = claims;
  if (typeof sub !== 'string' || sub === '') return signIn;
  const providerSession: ProviderSession = {
    sub,
    ...(typeof sid === 'string' && sid !== '' ? { sid } : {}),
    ...(typeof iat === 'number' && Number.isFinite(iat) ? { issuedAt: iat * 1000 } : {}),
  };
  return Object.assign(signIn, { providerSession });
}

export class OpenIdProvider extends ConfiguredProvider<OidcProviderConfig> implements Provider {
  readonly client: OidcProviderClient;
  readonly bearer: BearerValidation;
  readonly #bearerRules: { readonly audiences: readonly string[] };

  constructor(
    config: OidcProviderConfig,
    private readonly now: () => number = Date.now,
  ) {
    super(config);
    this.client = new OidcProviderClient(config, now);
    // An access token's audience: the allowed audiences, else this client.
    this.#bearerRules = { audiences: config.allowedAudiences.length > 0 ? config.allowedAudiences : [config.clientId] };
    this.bearer = {
      acceptsIssuer: (issuer) => this.client.acceptsIssuer(issuer),
      validate: (token, peeked) => this.#accessToken(token, peeked),
      introspects: () => this.client.introspects(),
      introspect: (token) => this.#introspected(token),
    };
  }

  get responseMode(): 'query' | 'form_post' {
    return this.config.responseMode;
  }

  async prepare(): Promise<void> {
    await this.client.configuration();
  }

  get discoveryUrl(): string | undefined {
    return this.config.discoveryUrl;
  }

  async begin(start: LoginStart): Promise<LoginBegun> {
    return { url: await this.client.authorizationUrl(start) };
  }

  async complete(callback: LoginCallback): Promise<SignIn> {
    authorizationCode(callback); // state and code checked before the provider is called
    const callbackUrl = new URL(callback.redirectUri);
    for (const [k, v] of callback.params) if (k !== 'user') callbackUrl.searchParams.append(k, v);
    const tokens = await this.client.redeem(callbackUrl, {
      redirectUri: callback.redirectUri,
      state: callback.state,
      nonce: callback.expectedNonce,
      codeVerifier: callback.codeVerifier,
    });
    const idClaims = { ...(tokens.claims ?? {}), ...this.#appleUser(callback.params) };
    // What the ID token says wins; the userinfo endpoint adds what a thin ID token leaves out
    // (name, email, groups), as mod_auth_openidc and oauth2-proxy take them.
    const claims = { ...(await this.#userInfoClaims(tokens.accessToken, idClaims.sub, tokens.dpopKey)), ...idClaims };
    this.#checkPolicy(claims, false);
    const signIn = this.#signIn(claims, storedTokens(tokens));
    await this.#lookUpGroups(signIn, tokens.accessToken);
    return withProviderSession(signIn, idClaims);
  }

  /** A sign-in's groups of a group overage asked of Microsoft Graph, when configured. */
  async #lookUpGroups(signIn: SignIn, accessToken: string | undefined): Promise<void> {
    if (signIn.access !== undefined)
      Object.assign(signIn, { access: await this.#withGraphGroups(signIn.access, accessToken) });
  }

  /**
   * The groups of a group overage from Microsoft Graph, with the user's access token, when
   * `claimSources.<aad>.graph` is set (docs/configuration.md#where-groups-and-roles-come-from).
   * A lookup that fails leaves the groups unknown, with why: every group rule then refuses.
   */
  async #withGraphGroups(access: AccessFacts, accessToken: string | undefined): Promise<AccessFacts> {
    const lookup = this.config.claimSources?.graph;
    if (lookup === undefined || access.groupsIncomplete === undefined) return access;
    if (accessToken === undefined)
      return { ...access, groupsIncomplete: graphLookupFailedMessage('the sign-in gave no access token to ask with') };
    try {
      const groups = await graphGroupIds(lookup, accessToken);
      const { groupsIncomplete: _, ...known } = access;
      return { ...known, groups: [...new Set([...access.groups, ...groups])] };
    } catch (error) {
      if (!(error instanceof GraphGroupsError)) throw error;
      return { ...access, groupsIncomplete: graphLookupFailedMessage(error.message) };
    }
  }

  /** The userinfo endpoint's claims for a sign-in, when the provider has one and the configuration wants them. */
  async #userInfoClaims(
    accessToken: string | undefined,
    subject: unknown,
    dpopKey?: SessionTokens['dpopKey'],
  ): Promise<Readonly<Record<string, unknown>>> {
    if (!this.config.claimsFromUserInfo || accessToken === undefined || typeof subject !== 'string') return {};
    return (await this.client.userInfo(accessToken, subject, dpopKey)) ?? {};
  }

  /**
   * New tokens; with a new ID token, the groups and roles it (and the userinfo endpoint, when
   * configured) tells now, so a member removed from a group loses what the group gave at refresh.
   */
  async refresh(refreshToken: string, session?: SessionTokens): Promise<RefreshedTokens> {
    const tokens = await this.client.refresh(refreshToken, session?.dpopKey, session?.idToken);
    const idClaims = tokens.claims;
    if (idClaims === undefined) return tokens;
    // An access token no header can carry cannot ask the userinfo endpoint either: the session
    // refuses such a refresh (as one the provider refused) when it checks the tokens.
    if (tokens.accessToken !== undefined && !isSendable(tokens.accessToken)) return tokens;
    const claims = { ...(await this.#userInfoClaims(tokens.accessToken, idClaims.sub, tokens.dpopKey)), ...idClaims };
    const access = await this.#withGraphGroups(accessFromClaims(claims, this.config.claimSources), tokens.accessToken);
    return { ...tokens, access };
  }

  endSessionUrl(parameters: {
    idTokenHint?: string;
    postLogoutRedirectUri: string;
    state: string;
  }): Promise<URL | undefined> {
    return this.client.endSessionUrl(parameters);
  }

  /** An ID token (audience: this client, or an allowed audience such as a native app's id), or a JWT access token. */
  async exchange(request: TokenExchange): Promise<SignIn> {
    try {
      if (request.idToken !== undefined) {
        const claims = await this.client.validateJwt(request.idToken, {
          audiences: [...new Set([this.config.clientId, ...this.config.allowedAudiences])],
        });
        // An ID token's audience is the signing-in app itself: the allowed-applications rule is for access tokens.
        this.#checkPolicy(claims, false);
        const signIn = this.#signIn(claims, {
          idToken: request.idToken,
          ...(request.accessToken !== undefined ? { accessToken: request.accessToken } : {}),
        });
        await this.#lookUpGroups(signIn, request.accessToken);
        return withProviderSession(signIn, claims);
      }
      if (request.accessToken !== undefined) {
        // Many providers' access tokens are opaque (Google's, oidc-provider's by default): only a JWT can be checked here.
        if (request.accessToken.split('.', 4).length !== 3)
          throw new ProviderRefusedError('token exchange: the access token is not a JWT', 'unsupported_token_type');
        return await this.#accessToken(request.accessToken, undefined, true);
      }
    } catch (error) {
      if (error instanceof InvalidTokenError)
        throw new ProviderRefusedError(`token exchange: ${error.reason}`, 'invalid_token');
      throw error;
    }
    if (request.authorizationCode !== undefined) {
      const tokens = await this.client.redeemClientCode(
        request.authorizationCode,
        request.redirectUri,
        request.codeVerifier,
      );
      const claims = tokens.claims ?? {};
      this.#checkPolicy(claims, false);
      const signIn = this.#signIn(claims, storedTokens(tokens));
      await this.#lookUpGroups(signIn, tokens.accessToken);
      return withProviderSession(signIn, claims);
    }
    throw new ProviderRefusedError(
      'token exchange: expected id_token, access_token or authorization_code',
      'invalid_request',
    );
  }

  /**
   * A JWT access token of this provider, its policy applied; valid until its `exp` (validateJwt
   * requires one). `forSession`: a token exchange, whose session a back-channel logout may end.
   */
  async #accessToken(
    token: string,
    peeked?: PeekedToken,
    forSession = false,
    /** Claims the provider vouched for itself (introspection): no JWT to check. */
    vouched?: JWTPayload,
  ): Promise<SignIn & { readonly expiresAt: number }> {
    const claims = vouched ?? (await this.client.validateJwt(token, this.#bearerRules, peeked));
    this.#checkPolicy(claims, true);
    const expiresAt = claims.exp! * 1000;
    // Added in place, not spread into a copy: this runs for every bearer token checked.
    const signIn = Object.assign(this.#signIn(claims, { accessToken: token, accessTokenExpiresAt: expiresAt }), {
      expiresAt,
      access: accessFromBearerClaims(claims, this.config.claimSources),
    });
    return forSession ? withProviderSession(signIn, claims) : signIn;
  }

  /**
   * An opaque access token, as the provider's introspection answers for it (docs/configuration.md#opaque-bearer-tokens):
   * made into the same sign-in a JWT bearer's claims make, trusted until its `exp` or the cache maximum.
   */
  async #introspected(token: string): Promise<SignIn & { readonly expiresAt: number }> {
    let answer: Readonly<Record<string, unknown>>;
    try {
      answer = await this.client.introspect(token);
    } catch (error) {
      if (!(error instanceof ProviderRefusedError)) throw error;
      // The provider answered with an error (its code only: the message may name the client).
      throw new InvalidTokenError(`introspection refused (${error.oauthError ?? 'error'})`);
    }
    const metadata = (await this.client.configuration()).serverMetadata();
    const expected = {
      clientId: this.config.clientId,
      audiences: this.#bearerRules.audiences,
      issuer: metadata.issuer,
      now: this.now(),
      cacheMs: this.config.introspection?.cacheMs ?? 0,
    };
    const claims = introspectedClaims(answer, expected);
    const signIn = await this.#accessToken(token, undefined, false, claims);
    return Object.assign(signIn, { expiresAt: trustedUntil(claims.exp, expected) });
  }

  /** A back-channel logout token: a JWT of this provider for this client, carrying the logout event. */
  async verifyLogoutToken(token: string): Promise<LogoutNotice> {
    const claims = await this.client.validateJwt(token, { audiences: [this.config.clientId], logoutToken: true });
    return logoutNotice(claims, this.now());
  }

  /** The directory's default authorization policy: allowed client applications (bearer tokens only) and principals. */
  #checkPolicy(claims: JWTPayload | Record<string, unknown>, clientDirected: boolean): void {
    const directory = this.config.directory;
    if (directory === undefined) return;
    if (clientDirected && directory.allowedApplications.length > 0) {
      const application =
        typeof claims.azp === 'string' ? claims.azp : typeof claims.appid === 'string' ? claims.appid : undefined;
      if (application === undefined || !directory.allowedApplications.includes(application))
        throw new TokenForbiddenError('client application not allowed');
    }
    if (directory.allowedIdentities.length > 0) {
      if (typeof claims.oid !== 'string' || !directory.allowedIdentities.includes(claims.oid))
        throw new TokenForbiddenError('principal not allowed');
    }
  }

  /** Apple sends the user's name once, on the first sign-in, as JSON in the `user` form field. */
  #appleUser(params: URLSearchParams): Record<string, unknown> {
    if (this.kind !== 'apple') return {};
    const raw = params.get('user');
    if (raw === null || raw.length > MAX_APPLE_USER_FIELD) return {};
    try {
      const user = JSON.parse(raw) as { name?: { firstName?: unknown; lastName?: unknown } };
      const parts = [user.name?.firstName, user.name?.lastName].filter(
        (p): p is string => typeof p === 'string' && p.trim() !== '',
      );
      return parts.length > 0 ? { name: parts.join(' ') } : {};
    } catch {
      return {};
    }
  }

  /** -ID: `oid` for the directory (stable across its apps), else `sub`. -NAME: the kind's name claim, then the usual fallbacks. */
  #signIn(claims: Readonly<Record<string, unknown>>, tokens: SessionTokens): SignIn {
    const subject = typeof claims.sub === 'string' ? claims.sub : '';
    const userId = this.kind === 'aad' && typeof claims.oid === 'string' ? claims.oid : subject;
    const name = userNameFrom(
      claims,
      this.kind === 'apple' && typeof claims.name === 'string' ? 'name' : this.config.nameClaimType,
    );
    const signIn: { -readonly [K in keyof SignIn]: SignIn[K] } = {
      userId,
      userName: name.name,
      nameType: name.type,
      roleType: 'roles',
      claims: claimList(claims),
      tokens,
      access: accessFromClaims(claims, this.config.claimSources),
    };
    if (typeof claims.exp === 'number') signIn.assertionExpiresAt = claims.exp * 1000;
    return signIn;
  }
}
