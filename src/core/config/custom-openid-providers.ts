// identityProviders.customOpenIdConnectProviders: any OpenID provider, by discovery or by its
// endpoints, under an alias of the document's choosing.
import { clientKeySettings } from './client-key-settings.js';
import { introspectionConfig } from './introspection-settings.js';
import { loginParameters } from './login-parameters.js';
import { oidcScopes, pushed } from './openid-login-settings.js';
import { BUILT_IN_ALIASES, RESERVED_ALIASES } from './provider-aliases.js';
import { fingerprint } from './provider-fingerprint.js';
import type { OidcProviderConfig, Providers } from './provider-settings.js';
import type { SecretReader } from './secret-reader.js';

export function customProviders(
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
