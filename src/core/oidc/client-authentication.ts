// How gatehouse authenticates as the client at the provider's token, pushed
// authorization and introspection endpoints, in openid-client's terms.
import * as oidc from 'openid-client';

import type { OidcProviderConfig } from '../config/provider-settings.js';
import type { ClientKey } from './client-key.js';
import type { ClientSecretJwt } from './client-secret-jwt.js';

/**
 * The client's private key (private_key_jwt, RFC 7523: openid-client signs a new assertion, with
 * its own `jti`, for each request), a signed client secret (renewed before each use), or
 * client_secret_post when configured (Easy Auth's clientCredential.method), else
 * client_secret_basic when the provider supports it (most do), else client_secret_post;
 * no secret: a public client with PKCE.
 */
export function clientAuthentication(
  config: OidcProviderConfig,
  metadata: oidc.ServerMetadata,
  clientKey: ClientKey | undefined,
  signedSecret: ClientSecretJwt | undefined,
): oidc.ClientAuth {
  const { clientId, clientSecret } = config;
  if (clientKey !== undefined) {
    const tokenEndpoint = metadata.token_endpoint;
    const directory = config.kind === 'aad';
    return oidc.PrivateKeyJwt(clientKey.privateKey, {
      [oidc.modifyAssertion]: (header, payload) => {
        // Microsoft's directory names the certificate by its thumbprint, and takes the token endpoint as audience.
        Object.assign(header, clientKey.certificateHeader);
        if (directory && tokenEndpoint !== undefined) payload.aud = tokenEndpoint;
      },
    });
  }
  if (signedSecret !== undefined) {
    return (_as, _client, body) => {
      body.set('client_id', clientId);
      body.set('client_secret', signedSecret.current());
    };
  }
  if (clientSecret === undefined) return oidc.None();
  const methods = metadata.token_endpoint_auth_methods_supported;
  const basic = config.secretInBody !== true && (methods === undefined || methods.includes('client_secret_basic'));
  return basic ? oidc.ClientSecretBasic(clientSecret) : oidc.ClientSecretPost(clientSecret);
}
