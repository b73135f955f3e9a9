// The identityProviders block, resolved: one settings object per enabled
// provider, secrets read from the environment, every problem named by its path.
import { createHash } from 'node:crypto';

import type { ClaimSources } from '../authorization/claims-access.js';
import type { ClientKeySettings } from '../oidc/client-key.js';
import { clientKeySettings } from './client-key-settings.js';
import { introspectionConfig, type IntrospectionConfig } from './introspection-settings.js';
import { loginParameters } from './login-parameters.js';
import type { AuthSettingsDocument } from './schema.js';

type Providers = NonNullable<AuthSettingsDocument['identityProviders']>;

export type OidcKind = 'oidc' | 'aad' | 'google' | 'apple';

interface Common {
  readonly alias: string;
  /** Changes whenever client id, issuer, audiences or signing metadata change (a re-authentication trigger). */
  readonly fingerprint: string;
}

export interface OidcProviderConfig extends Common {
  readonly kind: OidcKind;
  readonly clientId: string;
  /** From the environment variable clientSecretSettingName names; never logged. */
  readonly clientSecret: string | undefined;
  readonly discoveryUrl: string | undefined;
  readonly endpoints:
    | {
        readonly authorization: string;
        readonly token: string;
        readonly issuer: string;
        readonly jwksUri: string;
        readonly endSession?: string;
      }
    | undefined;
  readonly nameClaimType: string | undefined;
  /** After a sign-in, the userinfo endpoint's claims are added to the ID token's (login.claimsFromUserInfo). */
  readonly claimsFromUserInfo: boolean;
  readonly scopes: readonly string[];
  readonly loginParameters: Readonly<Record<string, string>>;
  /** Accepted `aud` values of bearer tokens; the client id when empty. */
  readonly allowedAudiences: readonly string[];
  /** `form_post`: the provider POSTs the callback from its own site. */
  readonly responseMode: 'query' | 'form_post';
  /** Enterprise directory: multi-tenant issuers and the default authorization policy. */
  readonly directory?: {
    /** The issuer's tenant segment is `common`, `organizations` or `consumers`: the real issuer is per tenant (`tid`). */
    readonly multiTenant: boolean;
    readonly allowedTenants: readonly string[];
    readonly allowedApplications: readonly string[];
    /** Checked at sign-in: the user's `oid` must be listed (unless allowedGroups is set, whose rule then names them too). */
    readonly allowedIdentities: readonly string[];
    /** Easy Auth's `allowedPrincipals.groups`: with principalIdentities, a rule every caller must pass. */
    readonly allowedGroups?: readonly string[];
    /** `allowedPrincipals.identities` when groups are listed too: a user listed here or in a group listed there. */
    readonly principalIdentities?: readonly string[];
    /** Easy Auth's `jwtClaimChecks.allowedGroups`: a rule every caller must pass. */
    readonly requiredGroups?: readonly string[];
  };
  /** Where the groups and roles authorization rules look at are read from (default `groups` and `roles`). */
  readonly claimSources?: ClaimSources;
  /** Device maker: the client secret is a JWT signed with this key, renewed by gatehouse. */
  readonly signedClientSecret?: { readonly teamId: string; readonly keyId: string; readonly privateKeyPem: string };
  /** `client_secret_post`: always send the secret in the token request's body (else Basic when the provider supports it). */
  readonly secretInBody?: boolean;
  /** registration.proofOfPossession DPoP: each session's tokens bound to a key of its own (custom providers). */
  readonly dpop?: boolean;
  /** login.pushedAuthorizationRequests: push every authorization request (else only when the provider's metadata requires it). */
  readonly pushedAuthorizationRequests?: boolean;
  /** private_key_jwt: the client's key (and certificate), from their settings or files; never logged. */
  readonly clientKey?: ClientKeySettings;
  /** Custom providers: opaque bearer tokens introspected at the provider (validation.introspection). */
  readonly introspection?: IntrospectionConfig;
}

export interface GitHubProviderConfig extends Common {
  readonly kind: 'github';
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes: readonly string[];
  /** `https://github.com`, or a GitHub Enterprise Server origin. */
  readonly webOrigin: string;
  /** `https://api.github.com`, or `https://host/api/v3`. */
  readonly apiBase: string;
  /** A rule allows by group: the user's organisations and teams are looked up at sign-in (read:org). */
  readonly organisations?: boolean;
}

export interface FacebookProviderConfig extends Common {
  readonly kind: 'facebook';
  readonly appId: string;
  readonly appSecret: string;
  readonly graphApiVersion: string;
  readonly scopes: readonly string[];
  /** `https://www.facebook.com` (the login dialog). */
  readonly dialogOrigin: string;
  /** `https://graph.facebook.com`. */
  readonly graphOrigin: string;
}

export interface TwitterProviderConfig extends Common {
  readonly kind: 'twitter';
  readonly consumerKey: string;
  readonly consumerSecret: string;
  /** `https://api.twitter.com`. */
  readonly apiOrigin: string;
}

export type ProviderConfig = OidcProviderConfig | GitHubProviderConfig | FacebookProviderConfig | TwitterProviderConfig;

/** Each built-in provider's key under identityProviders, and its alias (`/.auth/login/<alias>`, `-IDP`). */
export const BUILT_IN_PROVIDERS = {
  azureActiveDirectory: 'aad',
  google: 'google',
  facebook: 'facebook',
  gitHub: 'github',
  twitter: 'twitter',
  apple: 'apple',
} as const;

/** The aliases of the built-in providers. */
export const BUILT_IN_ALIASES: readonly string[] = Object.values(BUILT_IN_PROVIDERS);

/**
 * Every way to name a built-in provider, lower case, and its alias: its key or its alias. Easy Auth
 * documents name the default provider by either, in any case: `"redirectToProvider": "azureactivedirectory"`
 * is what App Service's own configurations carry.
 */
const BUILT_IN_NAMES: ReadonlyMap<string, string> = new Map(
  Object.entries(BUILT_IN_PROVIDERS).flatMap(([key, alias]) => [
    [key.toLowerCase(), alias],
    [alias, alias],
  ]),
);

type Aliases = ReadonlySet<string> | ReadonlyMap<string, unknown>;

/**
 * The alias of the enabled provider `name` names: an alias as written, else a built-in kind's key or
 * alias in any case, else the alias equal to it but for case. Undefined when none fits.
 */
export function providerAliasNamed(name: string, aliases: Aliases): string | undefined {
  if (aliases.has(name)) return name;
  const builtIn = BUILT_IN_NAMES.get(name.toLowerCase());
  if (builtIn !== undefined) return aliases.has(builtIn) ? builtIn : undefined;
  return aliasIgnoringCase(name, aliases);
}

/** The alias equal to `name` but for case; there is at most one (customProviders refuses aliases that differ only in case). */
export function aliasIgnoringCase(name: string, aliases: Aliases): string | undefined {
  const lower = name.toLowerCase();
  return [...aliases.keys()].find((alias) => alias.toLowerCase() === lower);
}

/** Names under /.auth/login/ that are gatehouse's own pages, so no provider may take them. */
export const RESERVED_ALIASES = ['done'] as const;

export const DEFAULT_FACEBOOK_GRAPH_VERSION = 'v19.0';
const MULTI_TENANT_SEGMENTS = new Set(['common', 'organizations', 'consumers']);

function fingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

function withOpenId(scopes: readonly string[]): string[] {
  return scopes.includes('openid') ? [...scopes] : ['openid', ...scopes];
}

/** The scopes configured (else openid, profile and email) and those a `scope=` login parameter adds, each once; openid always. */
function oidcScopes(configured: readonly string[] | undefined, added: readonly string[]): string[] {
  return withOpenId([...new Set([...(configured ?? ['openid', 'profile', 'email']), ...added])]);
}

/** login.pushedAuthorizationRequests, when set. */
function pushed(login: { readonly pushedAuthorizationRequests?: boolean } | undefined) {
  const value = login?.pushedAuthorizationRequests;
  return value === undefined ? {} : { pushedAuthorizationRequests: value };
}

/** Trailing slashes off, so paths can be appended. */
function base(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Environment variable names as conventionally written (App Service's own: MICROSOFT_PROVIDER_AUTHENTICATION_SECRET). */
const CONVENTIONAL_VARIABLE_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

/**
 * How a `*SettingName` that names no set variable is written in the problem. A secret pasted in
 * place of its variable's name is a common mistake, and the problem is printed and logged: so the
 * name is shown only when it is written as variable names are, and is no variable's value.
 */
function variableNamed(name: string, env: NodeJS.ProcessEnv): string {
  if (CONVENTIONAL_VARIABLE_NAME.test(name) && !Object.values(env).includes(name))
    return `environment variable ${name}`;
  return 'the environment variable it names (not shown: it is not written as variable names are, and may be a secret written in place of a name)';
}

class SecretReader {
  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly problems: string[],
  ) {}

  /** The variable's value; a problem (and '') when it is unset or empty. */
  required(path: string, name: string): string {
    // Own variables only: `constructor` names no variable, whatever the environment object inherits.
    const value = Object.hasOwn(this.env, name) ? this.env[name] : undefined;
    if (typeof value !== 'string' || value === '') {
      this.problems.push(`${path}: ${variableNamed(name, this.env)} is not set`);
      return '';
    }
    return value;
  }

  optional(path: string, name: string | undefined): string | undefined {
    return name === undefined ? undefined : this.required(path, name);
  }
}

function customProviders(
  block: Providers['customOpenIdConnectProviders'],
  secrets: SecretReader,
  problems: string[],
  warnings: string[],
): OidcProviderConfig[] {
  const out: OidcProviderConfig[] = [];
  // Sign-in paths match aliases without regard to case (/.auth/login/Corp is /.auth/login/corp), so two may not differ only in case.
  const seen = new Map<string, string>();
  for (const [alias, provider] of Object.entries(block ?? {})) {
    const path = `identityProviders.customOpenIdConnectProviders.${alias}`;
    if (!provider.enabled) continue;
    const twin = seen.get(alias.toLowerCase());
    if (twin !== undefined) {
      problems.push(
        `${path}: "${alias}" differs from the alias "${twin}" only in case (sign-in paths ignore case); choose another`,
      );
      continue;
    }
    seen.set(alias.toLowerCase(), alias);
    if (BUILT_IN_ALIASES.includes(alias.toLowerCase())) {
      problems.push(`${path}: "${alias}" is the alias of a built-in provider; choose another`);
      continue;
    }
    if ((RESERVED_ALIASES as readonly string[]).includes(alias.toLowerCase())) {
      problems.push(
        `${path}: "${alias}" is reserved (/.auth/login/${alias.toLowerCase()} is gatehouse's own page); choose another`,
      );
      continue;
    }
    const oidc = provider.registration.openIdConnectConfiguration;
    const explicit = [oidc.authorizationEndpoint, oidc.tokenEndpoint, oidc.issuer, oidc.certificationUri];
    let endpoints: OidcProviderConfig['endpoints'];
    if (oidc.wellKnownOpenIdConfiguration === undefined) {
      if (explicit.some((e) => e === undefined)) {
        problems.push(
          `${path}.registration.openIdConnectConfiguration: expected wellKnownOpenIdConfiguration, or all of authorizationEndpoint, tokenEndpoint, issuer and certificationUri`,
        );
        continue;
      }
      endpoints = {
        authorization: oidc.authorizationEndpoint!,
        token: oidc.tokenEndpoint!,
        issuer: oidc.issuer!,
        jwksUri: oidc.certificationUri!,
        ...(oidc.endSessionEndpoint ? { endSession: oidc.endSessionEndpoint } : {}),
      };
    }
    const audiences = provider.validation?.allowedAudiences ?? [];
    const login = loginParameters(path, provider.login, problems, warnings);
    const credential = provider.registration.clientCredential;
    const clientKey = clientKeySettings(
      `${path}.registration.clientCredential`,
      credential,
      (at, name) => secrets.required(at, name),
      problems,
      { secret: credential?.clientSecretSettingName !== undefined },
    );
    out.push({
      kind: 'oidc',
      alias,
      clientId: provider.registration.clientId,
      clientSecret: secrets.optional(
        `${path}.registration.clientCredential.clientSecretSettingName`,
        provider.registration.clientCredential?.clientSecretSettingName,
      ),
      discoveryUrl: oidc.wellKnownOpenIdConfiguration,
      endpoints,
      nameClaimType: provider.login?.nameClaimType,
      claimsFromUserInfo: provider.login?.claimsFromUserInfo ?? true,
      ...pushed(provider.login),
      scopes: oidcScopes(provider.login?.scopes, login.scopes),
      loginParameters: login.extra,
      allowedAudiences: audiences,
      responseMode: login.responseMode ?? 'query',
      ...(provider.registration.clientCredential?.method === 'ClientSecretPost' ? { secretInBody: true } : {}),
      ...(clientKey !== undefined ? { clientKey } : {}),
      ...(provider.registration.proofOfPossession === 'DPoP' ? { dpop: true } : {}),
      introspection: introspectionConfig(
        `${path}.validation.introspection`,
        provider.validation?.introspection,
        clientKey !== undefined || credential?.clientSecretSettingName !== undefined,
        problems,
      ),
      fingerprint: fingerprint([provider.registration.clientId, oidc, audiences]),
    });
  }
  return out;
}

function directoryProvider(
  block: NonNullable<Providers['azureActiveDirectory']>,
  secrets: SecretReader,
  problems: string[],
  warnings: string[],
): OidcProviderConfig | undefined {
  const path = 'identityProviders.azureActiveDirectory';
  const issuer = base(block.registration.openIdIssuer);
  const segments = new URL(issuer).pathname.split('/').filter(Boolean);
  if (segments.length === 0) {
    problems.push(
      `${path}.registration.openIdIssuer: expected an issuer with a tenant, such as https://login.microsoftonline.com/<tenant>/v2.0`,
    );
    return undefined;
  }
  const multiTenant = MULTI_TENANT_SEGMENTS.has(segments[0]!.toLowerCase());
  const validation = block.validation ?? {};
  const policy = validation.defaultAuthorizationPolicy ?? {};
  const groups = policy.allowedPrincipals?.groups ?? [];
  const requiredGroups = validation.jwtClaimChecks?.allowedGroups ?? [];
  const applications = allowedApplications(
    `${path}.validation`,
    policy.allowedApplications ?? [],
    validation.jwtClaimChecks?.allowedClientApplications ?? [],
    problems,
  );
  const login = loginParameters(path, block.login, problems, warnings);
  const thumbprint = block.registration.clientSecretCertificateThumbprint;
  const clientKey = clientKeySettings(
    `${path}.registration.clientCredential`,
    block.registration.clientCredential,
    (at, name) => secrets.required(at, name),
    problems,
    {
      secret: block.registration.clientSecretSettingName !== undefined,
      ...(thumbprint !== undefined
        ? { thumbprint: { path: `${path}.registration.clientSecretCertificateThumbprint`, value: thumbprint } }
        : {}),
    },
  );
  return {
    kind: 'aad',
    alias: 'aad',
    clientId: block.registration.clientId,
    clientSecret: secrets.optional(
      `${path}.registration.clientSecretSettingName`,
      block.registration.clientSecretSettingName,
    ),
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    endpoints: undefined,
    nameClaimType: block.login?.nameClaimType ?? 'preferred_username',
    // Off unless asked: Microsoft's userinfo endpoint is Graph's, which the app's own access token cannot call.
    claimsFromUserInfo: block.login?.claimsFromUserInfo ?? false,
    ...pushed(block.login),
    scopes: oidcScopes(block.login?.scopes, login.scopes),
    loginParameters: login.extra,
    allowedAudiences: validation.allowedAudiences ?? [],
    responseMode: login.responseMode ?? 'query',
    ...(clientKey !== undefined ? { clientKey } : {}),
    directory: {
      multiTenant,
      allowedTenants: validation.allowedTenants ?? [],
      allowedApplications: applications,
      // With groups, the identities are one way in of two: the rule of both is judged per request.
      allowedIdentities: groups.length > 0 ? [] : (policy.allowedPrincipals?.identities ?? []),
      ...(groups.length > 0
        ? { allowedGroups: groups, principalIdentities: policy.allowedPrincipals?.identities ?? [] }
        : {}),
      ...(requiredGroups.length > 0 ? { requiredGroups } : {}),
    },
    fingerprint: fingerprint([block.registration.clientId, issuer, validation.allowedAudiences ?? []]),
  };
}

/**
 * The client applications a bearer token of the directory may come from: `defaultAuthorizationPolicy.allowedApplications`
 * and `jwtClaimChecks.allowedClientApplications` each restrict them, so with both, those in both.
 */
function allowedApplications(
  path: string,
  policy: readonly string[],
  claimChecks: readonly string[],
  problems: string[],
): readonly string[] {
  if (policy.length === 0) return claimChecks;
  if (claimChecks.length === 0) return policy;
  const both = policy.filter((application) => claimChecks.includes(application));
  if (both.length === 0)
    problems.push(
      `${path}: defaultAuthorizationPolicy.allowedApplications and jwtClaimChecks.allowedClientApplications have no application in common, so no application's token is let in; list the applications in one of them`,
    );
  return both;
}

function googleProvider(
  block: NonNullable<Providers['google']>,
  secrets: SecretReader,
  problems: string[],
  warnings: string[],
): OidcProviderConfig {
  const path = 'identityProviders.google';
  const login = loginParameters(path, block.login, problems, warnings);
  const discoveryUrl =
    block.wellKnownOpenIdConfiguration ?? 'https://accounts.google.com/.well-known/openid-configuration';
  const audiences = block.validation?.allowedAudiences ?? [];
  return {
    kind: 'google',
    alias: 'google',
    clientId: block.registration.clientId,
    clientSecret: secrets.required(
      `${path}.registration.clientSecretSettingName`,
      block.registration.clientSecretSettingName,
    ),
    discoveryUrl,
    endpoints: undefined,
    nameClaimType: block.login?.nameClaimType ?? 'email',
    claimsFromUserInfo: block.login?.claimsFromUserInfo ?? true,
    ...pushed(block.login),
    scopes: oidcScopes(block.login?.scopes, login.scopes),
    // Google issues a refresh token only for offline access, and again only when consent is asked.
    loginParameters: { access_type: 'offline', prompt: 'consent', ...login.extra },
    allowedAudiences: audiences,
    responseMode: login.responseMode ?? 'query',
    fingerprint: fingerprint([block.registration.clientId, discoveryUrl, audiences]),
  };
}

function appleProvider(
  block: NonNullable<Providers['apple']>,
  secrets: SecretReader,
  problems: string[],
): OidcProviderConfig | undefined {
  const path = 'identityProviders.apple.registration';
  const registration = block.registration;
  const discoveryUrl =
    block.wellKnownOpenIdConfiguration ?? 'https://appleid.apple.com/.well-known/openid-configuration';
  let signedClientSecret: OidcProviderConfig['signedClientSecret'];
  let clientSecret: string | undefined;
  if (registration.privateKeySettingName !== undefined) {
    if (registration.teamId === undefined || registration.keyId === undefined) {
      problems.push(`${path}: privateKeySettingName needs teamId and keyId`);
      return undefined;
    }
    const pem = secrets.required(`${path}.privateKeySettingName`, registration.privateKeySettingName);
    signedClientSecret = { teamId: registration.teamId, keyId: registration.keyId, privateKeyPem: pem };
  } else if (registration.clientSecretSettingName !== undefined) {
    clientSecret = secrets.required(`${path}.clientSecretSettingName`, registration.clientSecretSettingName);
  } else {
    problems.push(`${path}: expected privateKeySettingName (with teamId and keyId), or clientSecretSettingName`);
    return undefined;
  }
  return {
    kind: 'apple',
    alias: 'apple',
    clientId: registration.clientId,
    clientSecret,
    discoveryUrl,
    endpoints: undefined,
    nameClaimType: 'email',
    // Apple has no userinfo endpoint: the name comes once, with the first sign-in's callback.
    claimsFromUserInfo: false,
    scopes: withOpenId(block.login?.scopes ?? ['openid', 'name', 'email']),
    loginParameters: {},
    allowedAudiences: [],
    // Apple requires form_post whenever name or email is asked for.
    responseMode: 'form_post',
    ...(signedClientSecret ? { signedClientSecret } : {}),
    fingerprint: fingerprint([registration.clientId, discoveryUrl, registration.teamId, registration.keyId]),
  };
}

function facebookProvider(fb: NonNullable<Providers['facebook']>, secrets: SecretReader): FacebookProviderConfig {
  const endpoints = fb.endpoints ?? {};
  return {
    kind: 'facebook',
    alias: 'facebook',
    appId: fb.registration.appId,
    appSecret: secrets.required(
      'identityProviders.facebook.registration.appSecretSettingName',
      fb.registration.appSecretSettingName,
    ),
    graphApiVersion: fb.graphApiVersion ?? DEFAULT_FACEBOOK_GRAPH_VERSION,
    scopes: fb.login?.scopes ?? ['public_profile', 'email'],
    dialogOrigin: base(endpoints.authorization ?? 'https://www.facebook.com'),
    graphOrigin: base(endpoints.graph ?? 'https://graph.facebook.com'),
    fingerprint: fingerprint([fb.registration.appId, endpoints]),
  };
}

function gitHubProvider(gh: NonNullable<Providers['gitHub']>, secrets: SecretReader): GitHubProviderConfig {
  const endpoints = gh.endpoints ?? {};
  return {
    kind: 'github',
    alias: 'github',
    clientId: gh.registration.clientId,
    clientSecret: secrets.required(
      'identityProviders.gitHub.registration.clientSecretSettingName',
      gh.registration.clientSecretSettingName,
    ),
    // user:email reads the primary verified address when the profile's is private.
    scopes: gh.login?.scopes ?? ['read:user', 'user:email'],
    webOrigin: base(endpoints.web ?? 'https://github.com'),
    apiBase: base(endpoints.api ?? 'https://api.github.com'),
    fingerprint: fingerprint([gh.registration.clientId, endpoints]),
  };
}

function twitterProvider(tw: NonNullable<Providers['twitter']>, secrets: SecretReader): TwitterProviderConfig {
  return {
    kind: 'twitter',
    alias: 'twitter',
    consumerKey: tw.registration.consumerKey,
    consumerSecret: secrets.required(
      'identityProviders.twitter.registration.consumerSecretSettingName',
      tw.registration.consumerSecretSettingName,
    ),
    apiOrigin: base(tw.endpoints?.api ?? 'https://api.twitter.com'),
    fingerprint: fingerprint([tw.registration.consumerKey, tw.endpoints ?? {}]),
  };
}

/** Every enabled provider of the document, keyed by alias; settings that are ignored are said in `warnings`. */
export function resolveProviders(
  providers: Providers | undefined,
  env: NodeJS.ProcessEnv,
  problems: string[],
  warnings: string[],
): Map<string, ProviderConfig> {
  const secrets = new SecretReader(env, problems);
  const out = new Map<string, ProviderConfig>();
  const add = (config: ProviderConfig | undefined) => config !== undefined && out.set(config.alias, config);
  const block = providers ?? {};
  if (block.azureActiveDirectory?.enabled)
    add(directoryProvider(block.azureActiveDirectory, secrets, problems, warnings));
  if (block.google?.enabled) add(googleProvider(block.google, secrets, problems, warnings));
  if (block.facebook?.enabled) add(facebookProvider(block.facebook, secrets));
  if (block.gitHub?.enabled) add(gitHubProvider(block.gitHub, secrets));
  if (block.twitter?.enabled) add(twitterProvider(block.twitter, secrets));
  if (block.apple?.enabled) add(appleProvider(block.apple, secrets, problems));
  for (const custom of customProviders(block.customOpenIdConnectProviders, secrets, problems, warnings)) add(custom);
  return out;
}
