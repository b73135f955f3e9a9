// GET, HEAD {apiPrefix}/client-keys/<provider>: the public key gatehouse authenticates to that
// provider with (private_key_jwt), as a JWKS document: what the provider registers, by value or
// as the client's jwks_uri (docs/configuration.md#client-authentication-by-key). Anonymous, like
// every published key set; public keys only. A provider without a client key: 404.
import type { Decision, RouteRequest } from '../http/request-view.js';
import { errorDecision, jsonDecision } from '../http/responses.js';
import { OpenIdProvider } from '../providers/openid.js';
import type { Provider } from '../providers/provider.js';

export async function clientKeys(provider: Provider | undefined, request: RouteRequest): Promise<Decision> {
  const key = provider instanceof OpenIdProvider ? provider.client.clientKey() : undefined;
  if (key === undefined) return errorDecision(404, 'Not found', 'No such provider with a client key.', request.json);
  return jsonDecision(200, (await key).jwks, { headers: { 'Cache-Control': 'public, max-age=300' } });
}
