// Where the browser goes to sign in: the authorization request's parameters
// (PKCE, state, nonce, the configured login parameters and prompt), sent in
// the URL or first pushed to the provider (RFC 9126).
import * as oidc from 'openid-client';

import type { OidcProviderConfig } from '../config/provider-settings.js';
import { ProviderRefusedError } from '../providers/errors.js';
import type { AccountPrompt } from '../providers/provider.js';
import { promptParameter } from './prompt-parameter.js';

export interface AuthorizationRequest {
  readonly redirectUri: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly prompt?: AccountPrompt;
}

/**
 * The authorization URL. With pushed authorization requests (configured, or required by the
 * provider's metadata), the parameters are first posted to the provider with the client's
 * credentials (`beforePush` readies them), and the URL carries only the client id and the
 * `request_uri` it answers.
 */
export async function authorizationUrl(
  configuration: oidc.Configuration,
  config: OidcProviderConfig,
  request: AuthorizationRequest,
  beforePush: () => Promise<void>,
): Promise<URL> {
  const metadata = configuration.serverMetadata();
  const { prompt_values_supported: supported } = metadata;
  const prompt = promptParameter(
    config.kind,
    config.loginParameters.prompt,
    request.prompt,
    Array.isArray(supported) ? supported.map(String) : undefined,
  );
  const pushed = config.pushedAuthorizationRequests ?? metadata.require_pushed_authorization_requests === true;
  if (pushed && metadata.pushed_authorization_request_endpoint === undefined)
    throw new ProviderRefusedError(
      'pushed authorization requests are configured, and the provider has no pushed_authorization_request_endpoint',
    );
  const parameters = {
    ...config.loginParameters,
    ...(prompt !== undefined ? { prompt } : {}),
    redirect_uri: request.redirectUri,
    response_type: 'code',
    ...(config.responseMode === 'form_post' ? { response_mode: 'form_post' } : {}),
    scope: config.scopes.join(' '),
    state: request.state,
    nonce: request.nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
    code_challenge_method: 'S256',
  };
  if (!pushed) return oidc.buildAuthorizationUrl(configuration, parameters);
  await beforePush();
  return await oidc.buildAuthorizationUrlWithPAR(configuration, parameters);
}
