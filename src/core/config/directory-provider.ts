// identityProviders.azureActiveDirectory: Microsoft's directory, one tenant or many, with Easy
// Auth's default authorization policy and JWT claim checks.
import { clientKeySettings } from './client-key-settings.js';
import { loginParameters } from './login-parameters.js';
import { oidcScopes, pushed } from './openid-login-settings.js';
import { fingerprint } from './provider-fingerprint.js';
import type { OidcProviderConfig, Providers } from './provider-settings.js';
import type { SecretReader } from './secret-reader.js';
import { withoutTrailingSlashes } from './without-trailing-slashes.js';

const MULTI_TENANT_SEGMENTS = new Set(['common', 'organizations', 'consumers']);

export function directoryProvider(
  block: NonNullable<Providers['azureActiveDirectory']>,
  secrets: SecretReader,
  problems: string[],
  warnings: string[],
): OidcProviderConfig | undefined {
  const path = 'identityProviders.azureActiveDirectory';
  const issuer = withoutTrailingSlashes(block.registration.openIdIssuer);
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
