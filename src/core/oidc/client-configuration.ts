// openid-client's Configuration for one provider: its metadata, this client
// and how it authenticates, the time and size limits of every call, and plain
// HTTP only to a provider on this machine.
import * as oidc from 'openid-client';

import type { OidcProviderConfig } from '../config/provider-settings.js';
import { isThisMachine } from '../http/this-machine.js';
import { boundedFetch } from '../providers/provider-http.js';
import { anyTenantUrl } from './tenant-issuer.js';

export const HTTP_TIMEOUT_SECONDS = 10;

/** `fetch` is boundedFetch, or one built on it (see id-token-aside.ts). */
export function clientConfiguration(
  metadata: oidc.ServerMetadata,
  config: OidcProviderConfig,
  auth: oidc.ClientAuth,
  fetch: oidc.CustomFetch = boundedFetch,
): oidc.Configuration {
  const configuration = new oidc.Configuration(metadata, config.clientId, config.clientSecret, auth);
  configuration.timeout = HTTP_TIMEOUT_SECONDS;
  configuration[oidc.customFetch] = fetch;
  if (isThisMachine(new URL(metadata.token_endpoint ?? anyTenantUrl(metadata.issuer)).host))
    oidc.allowInsecureRequests(configuration);
  return configuration;
}
