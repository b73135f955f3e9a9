// The resolved configuration the auth core runs on: defaults applied,
// secrets read from the environment, everything checked.
import { createHash } from 'node:crypto';

import { DEFAULT_HEADER_PREFIX } from '../identity.js';
import { ExcludedPathError, parseExcludedPaths, type ExcludedPathRule } from '../excluded-paths.js';
import { authSettingsSchema, timeSpanMs, unknownKeys, type AuthSettingsDocument } from './schema.js';

export const DEFAULT_SESSION_COOKIE = 'PlatformAuthSession';
export const DEFAULT_API_PREFIX = '/.auth';
export const DEFAULT_COOKIE_LIFETIME = '08:00:00';
export const DEFAULT_NONCE_LIFETIME = '00:05:00';

export type UnauthenticatedAction = 'RedirectToLoginPage' | 'AllowAnonymous' | 'Return401' | 'Return403' | 'Return404';

export interface OidcProviderConfig {
  readonly alias: string;
  readonly clientId: string;
  /** From the environment variable clientSecretSettingName names; never logged. */
  readonly clientSecret: string | undefined;
  readonly discoveryUrl: string | undefined;
  readonly endpoints:
    | { readonly authorization: string; readonly token: string; readonly issuer: string; readonly jwksUri: string; readonly endSession?: string }
    | undefined;
  readonly nameClaimType: string | undefined;
  readonly scopes: readonly string[];
  readonly loginParameters: Readonly<Record<string, string>>;
  /** Changes whenever client id, issuer, audiences or signing metadata change. */
  readonly fingerprint: string;
}

export interface AuthConfig {
  readonly enabled: boolean;
  readonly requireAuthentication: boolean;
  readonly unauthenticatedAction: UnauthenticatedAction;
  readonly defaultProvider: string | undefined;
  readonly excludedPaths: readonly ExcludedPathRule[];
  readonly requireHttps: boolean;
  readonly apiPrefix: string;
  readonly forwardProxy:
    | { readonly convention: 'NoProxy' }
    | { readonly convention: 'Standard' }
    | { readonly convention: 'Custom'; readonly hostHeader: string | undefined; readonly protoHeader: string | undefined };
  readonly tokenStore: { readonly enabled: boolean; readonly directory: string | undefined; readonly refreshExtensionMs: number };
  readonly allowedExternalRedirectUrls: readonly string[];
  readonly cookieExpiration: { readonly convention: 'FixedTime' | 'IdentityProviderDerived'; readonly lifetimeMs: number };
  readonly nonce: { readonly validate: boolean; readonly lifetimeMs: number };
  readonly preserveUrlFragmentsForLogins: boolean;
  readonly providers: ReadonlyMap<string, OidcProviderConfig>;
  readonly app: string;
  readonly headerPrefix: string;
  readonly sessionCookieName: string;
  readonly refreshWindowMs: number;
}

/** Every problem found, each naming its JSON path. */
export class AuthConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid authentication configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'AuthConfigError';
  }
}

export interface ResolvedConfig {
  readonly config: AuthConfig;
  /** Keys that were ignored. */
  readonly warnings: readonly string[];
}

function parameters(login: { loginParameters?: string[] | Record<string, string>; loginParameterNames?: string[] } | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const pairs = [...(Array.isArray(login?.loginParameters) ? login.loginParameters : []), ...(login?.loginParameterNames ?? [])];
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  if (login?.loginParameters && !Array.isArray(login.loginParameters)) Object.assign(out, login.loginParameters);
  return out;
}

function fingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

/** Validates a parsed authsettingsV2 document and resolves it against `env`. */
export function resolveAuthConfig(document: unknown, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const parsed = authSettingsSchema.safeParse(document);
  if (!parsed.success) {
    throw new AuthConfigError(
      parsed.error.issues.map((issue) => {
        // A bad record key reports "Invalid key in record"; the key's own rule says what was expected.
        const nested = 'issues' in issue && Array.isArray(issue.issues) ? (issue.issues as Array<{ message: string }>)[0]?.message : undefined;
        return `${issue.path.length ? issue.path.join('.') : '(document)'}: ${nested ?? issue.message}`;
      }),
    );
  }
  const doc: AuthSettingsDocument = parsed.data;
  const problems: string[] = [];
  const providers = new Map<string, OidcProviderConfig>();

  for (const [alias, provider] of Object.entries(doc.identityProviders?.customOpenIdConnectProviders ?? {})) {
    const base = `identityProviders.customOpenIdConnectProviders.${alias}`;
    if (!provider.enabled) continue;
    const oidc = provider.registration.openIdConnectConfiguration;
    const explicit = [oidc.authorizationEndpoint, oidc.tokenEndpoint, oidc.issuer, oidc.certificationUri];
    let endpoints: OidcProviderConfig['endpoints'];
    if (oidc.wellKnownOpenIdConfiguration === undefined) {
      if (explicit.some((e) => e === undefined)) {
        problems.push(`${base}.registration.openIdConnectConfiguration: expected wellKnownOpenIdConfiguration, or all of authorizationEndpoint, tokenEndpoint, issuer and certificationUri`);
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
    const settingName = provider.registration.clientCredential?.clientSecretSettingName;
    let clientSecret: string | undefined;
    if (settingName !== undefined) {
      clientSecret = env[settingName];
      if (clientSecret === undefined || clientSecret === '') {
        problems.push(`${base}.registration.clientCredential.clientSecretSettingName: environment variable ${settingName} is not set`);
      }
    }
    const scopes = provider.login?.scopes ?? ['openid', 'profile', 'email'];
    providers.set(alias, {
      alias,
      clientId: provider.registration.clientId,
      clientSecret,
      discoveryUrl: oidc.wellKnownOpenIdConfiguration,
      endpoints,
      nameClaimType: provider.login?.nameClaimType,
      scopes: scopes.includes('openid') ? scopes : ['openid', ...scopes],
      loginParameters: parameters(provider.login),
      fingerprint: fingerprint([provider.registration.clientId, oidc]),
    });
  }

  const global = doc.globalValidation ?? {};
  const defaultProvider = global.redirectToProvider ?? (providers.size === 1 ? [...providers.keys()][0] : undefined);
  if (global.redirectToProvider !== undefined && !providers.has(global.redirectToProvider)) {
    problems.push(`globalValidation.redirectToProvider: "${global.redirectToProvider}" is not an enabled provider (${[...providers.keys()].join(', ') || 'none configured'})`);
  }
  let excludedPaths: ExcludedPathRule[] = [];
  try {
    excludedPaths = parseExcludedPaths(global.excludedPaths ?? []);
  } catch (error) {
    if (!(error instanceof ExcludedPathError)) throw error;
    problems.push(`globalValidation.excludedPaths: ${error.message}`);
  }
  const action = global.unauthenticatedClientAction ?? 'RedirectToLoginPage';
  const unauthenticatedAction: UnauthenticatedAction = action === 'RejectWith401' ? 'Return401' : action === 'RejectWith404' ? 'Return404' : action;
  const requireAuthentication = global.requireAuthentication ?? unauthenticatedAction !== 'AllowAnonymous';
  if (requireAuthentication && unauthenticatedAction === 'RedirectToLoginPage' && providers.size === 0 && (doc.platform?.enabled ?? true)) {
    problems.push('identityProviders: authentication is required but no identity provider is enabled');
  }

  const proxy = doc.httpSettings?.forwardProxy;
  const forwardProxy: AuthConfig['forwardProxy'] =
    proxy?.convention === 'Custom'
      ? { convention: 'Custom', hostHeader: proxy.customHostHeaderName, protoHeader: proxy.customProtoHeaderName }
      : { convention: proxy?.convention ?? 'NoProxy' };
  if (proxy?.convention === 'Custom' && !proxy.customHostHeaderName && !proxy.customProtoHeaderName) {
    problems.push('httpSettings.forwardProxy: convention Custom needs customHostHeaderName and/or customProtoHeaderName');
  }

  if (problems.length > 0) throw new AuthConfigError(problems);
  const login = doc.login ?? {};
  const extras = doc.gatehouse ?? {};
  return {
    warnings: unknownKeys(document).map((path) => `${path}: unknown key, ignored`),
    config: {
      enabled: doc.platform?.enabled ?? true,
      requireAuthentication,
      unauthenticatedAction,
      defaultProvider,
      excludedPaths,
      requireHttps: doc.httpSettings?.requireHttps ?? false,
      apiPrefix: doc.httpSettings?.routes?.apiPrefix ?? DEFAULT_API_PREFIX,
      forwardProxy,
      tokenStore: {
        enabled: login.tokenStore?.enabled ?? true,
        directory: login.tokenStore?.fileSystem?.directory,
        refreshExtensionMs: (login.tokenStore?.tokenRefreshExtensionHours ?? 72) * 3_600_000,
      },
      allowedExternalRedirectUrls: login.allowedExternalRedirectUrls ?? [],
      cookieExpiration: {
        convention: login.cookieExpiration?.convention ?? 'FixedTime',
        lifetimeMs: timeSpanMs(login.cookieExpiration?.timeToExpiration ?? DEFAULT_COOKIE_LIFETIME),
      },
      nonce: {
        validate: login.nonce?.validateNonce ?? true,
        lifetimeMs: timeSpanMs(login.nonce?.nonceExpirationInterval ?? DEFAULT_NONCE_LIFETIME),
      },
      preserveUrlFragmentsForLogins: login.preserveUrlFragmentsForLogins ?? false,
      providers,
      app: extras.app ?? 'default',
      headerPrefix: extras.headerPrefix ?? DEFAULT_HEADER_PREFIX,
      sessionCookieName: extras.sessionCookieName ?? DEFAULT_SESSION_COOKIE,
      refreshWindowMs: (extras.refreshWindowSeconds ?? 300) * 1000,
    },
  };
}
