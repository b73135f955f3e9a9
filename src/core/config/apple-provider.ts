import { withOpenId } from './openid-login-settings.js';
import { fingerprint } from './provider-fingerprint.js';
import type { OidcProviderConfig, Providers } from './provider-settings.js';
import type { SecretReader } from './secret-reader.js';

/**
 * identityProviders.apple: Sign in with Apple, its client secret given, or signed by gatehouse
 * with the developer's key (teamId, keyId).
 */
export function appleProvider(
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
