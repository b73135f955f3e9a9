// What makes a JWT a back-channel logout token (OpenID Connect Back-Channel Logout 1.0 §2.4):
// the logout event among its `events`, and, from providers that type their tokens explicitly,
// `typ: logout+jwt`. A logout token is signed by the provider for this client, like an ID token,
// and has a `sub` and an `exp`, so it must be told apart wherever a provider's JWT is taken:
// taken as an ID token or access token, it would sign in the user it says signed out.

export const BACK_CHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** The media type `logout+jwt`, as `typ` may write it (RFC 7515 §4.1.9: the `application/` prefix may be left out, any case). */
const LOGOUT_TYPE = /^(application\/)?logout\+jwt$/i;

export function isLogoutToken(
  protectedHeader: { readonly typ?: unknown },
  claims: Readonly<Record<string, unknown>>,
): boolean {
  if (typeof protectedHeader.typ === 'string' && LOGOUT_TYPE.test(protectedHeader.typ)) return true;
  const { events } = claims;
  return typeof events === 'object' && events !== null && Object.hasOwn(events, BACK_CHANNEL_LOGOUT_EVENT);
}
