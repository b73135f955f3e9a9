// GET /.auth/logout/frontchannel/<provider>?iss=…&sid=…: OpenID Connect
// Front-Channel Logout 1.0. When a user signs out at the provider, its logout
// page loads this URL in an iframe (the URL registered with it as
// frontchannel_logout_uri, with frontchannel_logout_session_required), naming its
// issuer and the provider session that ended; the sign-ins made in that session
// end here, as a back-channel logout with that sid would end them.
//
// The request carries no proof (the spec's design: the sid is the provider's
// opaque session id), so it can do no more than the sid allows: end sign-ins of
// that provider session, never anything else, and it writes a sign-out only for
// a provider session a sign-in here was made in (a flood of made-up sids writes
// nothing). It is answered the same whether or not a session ended (nothing to
// learn by probing), and only the provider's origin may frame the answer.
import type { Decision, RouteRequest } from '../http/request-view.js';
import { framedPageDecision, errorDecision } from '../http/responses.js';
import { ProviderUnavailableError } from '../providers/errors.js';
import type { LayerContext } from './context.js';

/** Longest sid taken: providers' session ids are tens of characters. */
const MAX_SID_LENGTH = 512;

/** `alias`: as the path names it; matched exactly, since it is the URL registered with the provider. */
export async function frontChannelLogout(
  context: LayerContext,
  request: RouteRequest,
  alias: string,
): Promise<Decision> {
  const refuse = (status: number, reason: string): Decision => {
    context.logger.warn({ provider: alias, reason, path: request.view.path }, 'front-channel logout refused');
    return errorDecision(status, 'Sign-out not done', `Front-channel logout refused: ${reason}.`, false);
  };
  const provider = context.providers.get(alias);
  if (provider === undefined) return refuse(404, `no identity provider "${alias}" is configured`);
  // Only OpenID providers have provider sessions to name (the same as back-channel logout).
  if (provider.verifyLogoutToken === undefined || provider.bearer === undefined)
    return refuse(404, `${provider.displayName} has no front-channel logout`);
  const params = request.searchParams;
  const issuers = params.getAll('iss');
  const sids = params.getAll('sid');
  if (issuers.length !== 1 || sids.length !== 1 || issuers[0] === '' || sids[0] === '')
    return refuse(400, 'iss and sid must each be given once');
  const [iss, sid] = [issuers[0]!, sids[0]!];
  if (sid.length > MAX_SID_LENGTH) return refuse(400, 'sid too long');
  let origin: string;
  try {
    if (!(await provider.bearer.acceptsIssuer(iss))) return refuse(400, 'iss is not this provider');
    origin = new URL(iss).origin;
  } catch (error) {
    if (!(error instanceof ProviderUnavailableError)) throw error;
    context.logger.error({ provider: alias, reason: error.message }, 'identity provider unavailable');
    return errorDecision(
      503,
      'Sign-out not done',
      'The identity provider could not be reached to check the sign-out.',
      false,
      { headers: { 'Retry-After': '5' } },
    );
  }
  const endedHere = await context.sessions.signedOutAtProvider(alias, { sid, issuedAt: context.now() }, 'unproven');
  context.metrics.logout(alias, 'provider');
  // The sid is not logged: it is all a front-channel logout needs to name a session.
  context.logger.info(
    { provider: alias, scope: 'provider session', cachedSessionsEnded: endedHere },
    'signed out at the provider (front-channel logout)',
  );
  return framedPageDecision('Signed out', 'You are signed out of this application.', origin);
}
