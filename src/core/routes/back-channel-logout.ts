// POST /.auth/logout/backchannel/<provider>: OpenID Connect Back-Channel
// Logout 1.0. The provider tells gatehouse, server to server, that a user
// signed out there (or their session there ended), in a logout token it
// signed; the sessions the token names end here too. The caller is the
// provider, not a person: 200 without a body once the sign-out is kept, 400
// with an OAuth error (§2.8) when the request or its token is not good.
import {
  type Decision,
  MAX_AUTH_BODY_BYTES,
  mediaType,
  readBoundedBody,
  type RouteRequest,
} from '../http/request-view.js';
import { emptyDecision, jsonDecision } from '../http/responses.js';
import { ProviderUnavailableError } from '../providers/errors.js';
import { InvalidTokenError } from '../tokens/errors.js';
import type { LayerContext } from './context.js';

/** `alias`: as the path names it (letters, digits, '-' and '_'); matched exactly, since it is the URL registered with the provider. */
export async function backChannelLogout(
  context: LayerContext,
  request: RouteRequest,
  alias: string,
): Promise<Decision> {
  const refuse = (status: number, reason: string, headers?: Readonly<Record<string, string>>): Decision => {
    context.logger.warn({ provider: alias, reason, path: request.view.path }, 'back-channel logout refused');
    return jsonDecision(status, { error: 'invalid_request', error_description: reason }, headers ? { headers } : {});
  };
  const provider = context.providers.get(alias);
  if (provider === undefined) return refuse(404, `no identity provider "${alias}" is configured`);
  // Only OpenID providers sign logout tokens.
  if (provider.verifyLogoutToken === undefined)
    return refuse(404, `${provider.displayName} has no back-channel logout`);
  if (mediaType(request.view) !== 'application/x-www-form-urlencoded')
    return refuse(415, 'the logout token must come as a form (application/x-www-form-urlencoded)');
  const read = await readBoundedBody(request.view, MAX_AUTH_BODY_BYTES);
  if (!('body' in read)) return refuse(read.status, read.reason, read.headers);
  const tokens = new URLSearchParams(read.body.toString('utf8')).getAll('logout_token');
  if (tokens.length !== 1 || tokens[0] === '')
    return refuse(400, tokens.length > 1 ? 'more than one logout_token' : 'no logout_token');
  let notice;
  try {
    notice = await provider.verifyLogoutToken(tokens[0]!);
  } catch (error) {
    if (error instanceof InvalidTokenError) return refuse(400, `logout token ${error.reason}`);
    if (error instanceof ProviderUnavailableError) {
      // Its keys or metadata cannot be fetched: the token cannot be checked either way.
      context.logger.error({ provider: alias, reason: error.message }, 'identity provider unavailable');
      return jsonDecision(503, {
        error: 'temporarily_unavailable',
        error_description: 'the identity provider could not be reached to check the logout token',
      });
    }
    throw error;
  }
  const endedHere = await context.sessions.signedOutAtProvider(alias, notice);
  context.metrics.logout(alias, 'provider');
  // Neither sub nor sid is logged: a sid is all a front-channel logout needs to name a session.
  context.logger.info(
    { provider: alias, scope: notice.sid !== undefined ? 'provider session' : 'user', cachedSessionsEnded: endedHere },
    'signed out at the provider (back-channel logout)',
  );
  return emptyDecision(200);
}
