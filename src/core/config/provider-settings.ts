// The identityProviders block, resolved: one settings object per enabled
// provider, secrets read from the environment, every problem named by its path. Each kind of
// provider is read by a file of its own (custom-openid-providers.ts, directory-provider.ts,
// google-provider.ts, apple-provider.ts, oauth-providers.ts); how providers are named is
// provider-aliases.ts.
import type { ClaimSources } from '../authorization/claims-access.js';
import type { ClientKeySettings } from '../oidc/client-key.js';
import { appleProvider } from './apple-provider.js';
import { customProviders } from './custom-openid-providers.js';
import { directoryProvider } from './directory-provider.js';
import { googleProvider } from './google-provider.js';
import type { IntrospectionConfig } from './introspection-settings.js';
import { facebookProvider, gitHubProvider, twitterProvider } from './oauth-providers.js';
import type { AuthSettingsDocument } from './schema.js';
import { SecretReader } from './secret-reader.js';

export {
  aliasIgnoringCase,
  BUILT_IN_ALIASES,
  BUILT_IN_PROVIDERS,
  providerAliasNamed,
  RESERVED_ALIASES,
} from './provider-aliases.js';

export type Providers = NonNullable<AuthSettingsDocument['identityProviders']>;

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
