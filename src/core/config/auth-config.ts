// The resolved configuration the auth core runs on: defaults applied,
// secrets read from the environment, everything checked.
import { DEFAULT_HEADER_PREFIX } from '../identity.js';
import { parseExcludedPaths, type ExcludedPathRule } from '../excluded-paths.js';
import { providerAliasNamed, resolveProviders, type ProviderConfig } from './provider-settings.js';
import { jsonPath } from './json-path.js';
import { resolveAuthorization } from './authorization-settings.js';
import { identityAssertionSettings, type IdentityAssertionSettings } from '../assertion/settings.js';
import type { AuthorizationPolicy } from '../authorization/policy.js';
import { authSettingsOf } from './resource-envelope.js';
import { withoutUnregisteredProviders } from './unregistered-providers.js';
import { didYouMean } from '../closest-name.js';
import { verifyCacheSettings, type VerifyCacheSettings } from '../forward-auth/cache-settings.js';
import { authSettingsSchema, timeSpanMs, unknownKeys, type AuthSettingsDocument } from './schema.js';

export const DEFAULT_SESSION_COOKIE = 'PlatformAuthSession';
export const DEFAULT_API_PREFIX = '/.auth';
export const DEFAULT_COOKIE_LIFETIME = '08:00:00';
export const DEFAULT_NONCE_LIFETIME = '00:05:00';

export type { ProviderConfig, OidcProviderConfig } from './provider-settings.js';

export type UnauthenticatedAction = 'RedirectToLoginPage' | 'AllowAnonymous' | 'Return401' | 'Return403' | 'Return404';

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
    | {
        readonly convention: 'Custom';
        readonly hostHeader: string | undefined;
        readonly protoHeader: string | undefined;
      };
  readonly tokenStore: {
    readonly enabled: boolean;
    readonly directory: string | undefined;
    readonly refreshExtensionMs: number;
  };
  readonly allowedExternalRedirectUrls: readonly string[];
  readonly cookieExpiration: {
    readonly convention: 'FixedTime' | 'IdentityProviderDerived';
    readonly lifetimeMs: number;
    /** login.cookieExpiration.inactivityTimeout: a session unused this long ends (none: only its lifetime ends it). */
    readonly idleTimeoutMs?: number;
  };
  readonly nonce: { readonly validate: boolean; readonly lifetimeMs: number };
  readonly preserveUrlFragmentsForLogins: boolean;
  readonly providers: ReadonlyMap<string, ProviderConfig>;
  readonly app: string;
  readonly headerPrefix: string;
  readonly sessionCookieName: string;
  readonly refreshWindowMs: number;
  /** CORS preflights on protected paths go to the app anonymously instead of being challenged (cors-preflight.ts). */
  readonly forwardCorsPreflights: boolean;
  /** How long a web server may keep verify answers (gatehouse.verifyCache); undefined: not at all. */
  readonly verifyCache?: VerifyCacheSettings;
  /** Who may get in (gatehouse.authorization, and the directory's Easy Auth policy); OPEN_POLICY: any signed-in user. */
  readonly authorization?: AuthorizationPolicy;
  /** The signed identity assertion header (gatehouse.identityAssertion); undefined: off. */
  readonly identityAssertion?: IdentityAssertionSettings;
}

/**
 * Every problem found, each naming its JSON path. The document's unknown keys come with them:
 * a misspelled key is ignored, and what it was meant to set then shows up as a problem of its own
 * (`identityProvider` for `identityProviders` reads as "no identity provider is enabled").
 */
export class AuthConfigError extends Error {
  constructor(
    readonly problems: readonly string[],
    readonly warnings: readonly string[] = [],
    /** Where the document came from, and which other sources were set but not read ("from X (Y is set too, and ignored)"). */
    readonly source?: string,
  ) {
    const list = (lines: readonly string[]) => lines.map((line) => `  - ${line}`).join('\n');
    const from = source === undefined ? '' : ` ${source}`;
    super(
      `invalid authentication configuration${from}:\n${list(problems)}${warnings.length > 0 ? `\nand what was ignored (a misspelled key?):\n${list(warnings)}` : ''}`,
    );
    this.name = 'AuthConfigError';
  }
}

export interface ResolvedConfig {
  readonly config: AuthConfig;
  /** What was ignored: unknown keys, login parameters that gatehouse sets itself, sources not read. */
  readonly warnings: readonly string[];
}

/** Validates a parsed authsettingsV2 document (or the Azure resource around one) and resolves it against `env`. */
export function resolveAuthConfig(given: unknown, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const registered = withoutUnregisteredProviders(authSettingsOf(given));
  const document = registered.document;
  const warnings: string[] = [
    ...registered.warnings,
    ...unknownKeys(document).map(({ path, key, known }) => `${path}: unknown key, ignored${didYouMean(key, known)}`),
  ];
  const parsed = authSettingsSchema.safeParse(document);
  if (!parsed.success) {
    throw new AuthConfigError(
      parsed.error.issues.map((issue) => {
        // A bad record key reports "Invalid key in record"; the key's own rule says what was expected.
        const nested =
          'issues' in issue && Array.isArray(issue.issues)
            ? (issue.issues as Array<{ message: string }>)[0]?.message
            : undefined;
        return `${issue.path.length ? jsonPath(issue.path) : '(document)'}: ${nested ?? issue.message}`;
      }),
      warnings,
    );
  }
  const doc: AuthSettingsDocument = parsed.data;
  const problems: string[] = [];
  const authorization = resolveAuthorization(
    doc.gatehouse?.authorization,
    resolveProviders(doc.identityProviders, env, problems, warnings),
    problems,
    doc.identityProviders?.gitHub?.login?.scopes !== undefined,
  );
  const providers = authorization.providers;

  const global = doc.globalValidation ?? {};
  const named =
    global.redirectToProvider === undefined ? undefined : providerAliasNamed(global.redirectToProvider, providers);
  const defaultProvider = named ?? (providers.size === 1 ? [...providers.keys()][0] : undefined);
  if (global.redirectToProvider !== undefined && named === undefined) {
    problems.push(
      `globalValidation.redirectToProvider: ${JSON.stringify(global.redirectToProvider)} is not an enabled provider (${[...providers.keys()].join(', ') || 'none configured'})`,
    );
  }
  const excludedPaths = parseExcludedPaths(global.excludedPaths ?? []); // each rule checked by the schema
  const action = global.unauthenticatedClientAction ?? 'RedirectToLoginPage';
  const unauthenticatedAction: UnauthenticatedAction =
    action === 'RejectWith401' ? 'Return401' : action === 'RejectWith404' ? 'Return404' : action;
  const requireAuthentication = global.requireAuthentication ?? unauthenticatedAction !== 'AllowAnonymous';
  if (
    requireAuthentication &&
    unauthenticatedAction === 'RedirectToLoginPage' &&
    providers.size === 0 &&
    (doc.platform?.enabled ?? true)
  ) {
    problems.push('identityProviders: authentication is required but no identity provider is enabled');
  }

  const proxy = doc.httpSettings?.forwardProxy;
  const forwardProxy: AuthConfig['forwardProxy'] =
    proxy?.convention === 'Custom'
      ? { convention: 'Custom', hostHeader: proxy.customHostHeaderName, protoHeader: proxy.customProtoHeaderName }
      : { convention: proxy?.convention ?? 'NoProxy' };

  if (problems.length > 0) throw new AuthConfigError(problems, warnings);
  const login = doc.login ?? {};
  const extras = doc.gatehouse ?? {};
  return {
    warnings,
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
        ...(login.cookieExpiration?.inactivityTimeout !== undefined
          ? { idleTimeoutMs: timeSpanMs(login.cookieExpiration.inactivityTimeout) }
          : {}),
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
      forwardCorsPreflights: extras.forwardCorsPreflights ?? false,
      verifyCache: verifyCacheSettings(extras.verifyCache),
      authorization: authorization.policy,
      identityAssertion: identityAssertionSettings(extras.identityAssertion),
    },
  };
}
