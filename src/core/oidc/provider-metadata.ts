// A provider's metadata: discovered through openid-client (its discovery
// document, size-limited and time-limited), or written out in the
// configuration when the provider publishes none.
import * as oidc from 'openid-client';

import type { OidcProviderConfig } from '../config/provider-settings.js';
import { isThisMachine } from '../http/this-machine.js';
import { boundedFetch } from '../providers/provider-http.js';
import { HTTP_TIMEOUT_SECONDS } from './client-configuration.js';
import { checkTenantTemplate } from './tenant-issuer.js';

const WELL_KNOWN = '/.well-known/openid-configuration';

/** The provider's metadata, with a configured introspection endpoint in place of a discovered one. */
export async function providerMetadata(config: OidcProviderConfig): Promise<oidc.ServerMetadata> {
  const metadata = config.discoveryUrl !== undefined ? await discover(config) : configuredMetadata(config);
  const endpoint = config.introspection?.endpoint;
  return endpoint === undefined ? metadata : { ...metadata, introspection_endpoint: endpoint };
}

async function discover(config: OidcProviderConfig): Promise<oidc.ServerMetadata> {
  const discovery = new URL(config.discoveryUrl!);
  const multiTenant = config.directory?.multiTenant === true;
  // Given the issuer (the URL is the standard one), openid-client checks that the document
  // names it. A multi-tenant directory's names the tenant template instead: it is given the
  // document's URL, and the template is checked here.
  const issuer =
    !multiTenant && discovery.pathname.endsWith(WELL_KNOWN) && discovery.search === ''
      ? new URL(discovery.href.slice(0, -WELL_KNOWN.length))
      : discovery;
  const configuration = await oidc.discovery(issuer, config.clientId, config.clientSecret, undefined, {
    timeout: HTTP_TIMEOUT_SECONDS,
    [oidc.customFetch]: boundedFetch,
    ...(isThisMachine(discovery.host) ? { execute: [oidc.allowInsecureRequests] } : {}),
  });
  const metadata = configuration.serverMetadata();
  if (multiTenant) checkTenantTemplate(metadata, discovery.href);
  return metadata;
}

function configuredMetadata(config: OidcProviderConfig): oidc.ServerMetadata {
  const endpoints = config.endpoints!;
  return {
    issuer: endpoints.issuer,
    authorization_endpoint: endpoints.authorization,
    token_endpoint: endpoints.token,
    jwks_uri: endpoints.jwksUri,
    ...(endpoints.endSession ? { end_session_endpoint: endpoints.endSession } : {}),
  };
}
