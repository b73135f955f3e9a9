import { loginParameters } from './login-parameters.js';
import { oidcScopes, pushed } from './openid-login-settings.js';
import { fingerprint } from './provider-fingerprint.js';
import type { OidcProviderConfig, Providers } from './provider-settings.js';
import type { SecretReader } from './secret-reader.js';

/** identityProviders.google: Google's OpenID provider, asked for a refresh token. */
export function googleProvider(
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
