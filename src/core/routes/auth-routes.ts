// gatehouse's own routes under the API prefix (/.auth by default): which handler answers which
// path and method (docs/endpoints.md).
import type { AssertionKeyRing } from '../assertion/key-ring.js';
import { aliasIgnoringCase } from '../config/provider-settings.js';
import type { Decision, RouteRequest } from '../http/request-view.js';
import { errorDecision, jsonDecision, redirectDecision } from '../http/responses.js';
import type { Provider } from '../providers/provider.js';
import { loginDone, logout, logoutComplete, logoutDone, me, ready, refresh, version } from './account-routes.js';
import { assertionKeys } from './assertion-keys.js';
import { backChannelLogout } from './back-channel-logout.js';
import { signInLinks } from './challenge.js';
import { exchangeToken } from './client-directed.js';
import { clientKeys } from './client-keys.js';
import type { LayerContext } from './context.js';
import { frontChannelLogout } from './front-channel-logout.js';
import { finishLogin } from './login-callback.js';
import { startLogin } from './login-flow.js';
import { loginPath, returnUrlParameter } from './login-paths.js';

const LOGIN_PATH = /^\/login\/([A-Za-z0-9][A-Za-z0-9_-]*)(\/callback)?$/;
/** Where a provider posts its back-channel logout tokens (the URL registered with it, so the alias exactly). */
const BACK_CHANNEL_LOGOUT_PATH = /^\/logout\/backchannel\/([A-Za-z0-9][A-Za-z0-9_-]*)$/;
/** Where a provider's logout page frames its front-channel logout (the URL registered with it, so the alias exactly). */
const FRONT_CHANNEL_LOGOUT_PATH = /^\/logout\/frontchannel\/([A-Za-z0-9][A-Za-z0-9_-]*)$/;
/** Where a provider finds the public key gatehouse authenticates to it with (private_key_jwt). */
const CLIENT_KEYS_PATH = /^\/client-keys\/([A-Za-z0-9][A-Za-z0-9_-]*)$/;

/**
 * The methods each of gatehouse's own fixed routes answers; any other is a 405 naming these.
 * Pages and reads take GET and HEAD; the routes that act (refresh, logout) take GET, as Easy Auth
 * clients call them, and POST, never HEAD, which must not change anything.
 */
const READ: readonly string[] = ['GET', 'HEAD'];
const ACT: readonly string[] = ['GET', 'POST'];
const OWN_ROUTE_METHODS: ReadonlyMap<string, readonly string[]> = new Map([
  ['/me', READ],
  ['/refresh', ACT],
  ['/logout', ACT],
  ['/logout/complete', READ],
  ['/logout/done', READ],
  ['/login/done', READ],
  ['/version', READ],
  ['/ready', READ],
  ['/keys', READ],
]);

/**
 * Sign-in paths by a provider's other name, sent on to the configured one (unless a provider of that
 * name is configured): Twitter is X now, and a link to /.auth/login/x should not be a 404.
 */
const OTHER_NAMES: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  x: 'twitter',
});

/** The answer of the route at `route` (the path after the API prefix); `assertionRing`: the keys /keys publishes, when assertions are on. */
export async function authRoute(
  context: LayerContext,
  assertionRing: AssertionKeyRing | undefined,
  request: RouteRequest,
  route: string,
): Promise<Decision> {
  // gatehouse's own routes first: a provider alias can never shadow one (the config refuses "done").
  const methods = OWN_ROUTE_METHODS.get(route);
  if (methods !== undefined && !methods.includes(request.view.method))
    return methodNotAllowed(context, request, methods.join(', '));
  switch (route) {
    case '/me':
      return me(context, request);
    case '/refresh':
      return refresh(context, request);
    case '/logout':
      return logout(context, request);
    case '/logout/complete':
      return logoutComplete(context, request);
    case '/logout/done':
      return logoutDone();
    case '/login/done':
      return loginDone(context, request);
    case '/ready':
      return ready(context);
    case '/version':
      return version(context);
    case '/keys':
      return assertionKeys(assertionRing, request);
  }
  const backChannel = BACK_CHANNEL_LOGOUT_PATH.exec(route);
  if (backChannel !== null) {
    if (request.view.method !== 'POST') return methodNotAllowed(context, request, 'POST');
    return backChannelLogout(context, request, backChannel[1]!);
  }
  const keys = CLIENT_KEYS_PATH.exec(route);
  if (keys !== null) {
    if (!READ.includes(request.view.method)) return methodNotAllowed(context, request, READ.join(', '));
    return clientKeys(context.providers.get(keys[1]!), request);
  }
  const frontChannel = FRONT_CHANNEL_LOGOUT_PATH.exec(route);
  if (frontChannel !== null) {
    // GET only: a HEAD must change nothing.
    if (request.view.method !== 'GET') return methodNotAllowed(context, request, 'GET');
    return frontChannelLogout(context, request, frontChannel[1]!);
  }
  const login = LOGIN_PATH.exec(route);
  if (login === null) {
    context.logger.info({ reason: 'no such endpoint', path: request.view.path }, 'request rejected');
    return errorDecision(404, 'Not found', 'No such authentication endpoint.', request.json);
  }
  const alias = login[1]!;
  const method = request.view.method;
  const provider = providerNamed(context, alias, login[2] !== undefined);
  if (provider === undefined) {
    // The alias matched LOGIN_PATH: letters, digits, '-' and '_' only, safe to log.
    context.logger.info({ reason: 'unknown provider', provider: alias, path: request.view.path }, 'request rejected');
    // A mistyped or outdated sign-in link: the page offers the providers there are.
    return errorDecision(
      404,
      'Unknown provider',
      `No identity provider "${alias}" is configured.`,
      request.json,
      {},
      signInLinks(context),
    );
  }
  if (provider.alias !== alias && (method === 'GET' || method === 'HEAD')) {
    // One address per sign-in start: its login cookie's path is the alias as configured.
    const query = request.view.query;
    return redirectDecision(`${loginPath(context.config.apiPrefix, provider.alias)}${query ? `?${query}` : ''}`);
  }
  if (login[2] !== undefined) {
    if (method !== 'GET' && method !== 'POST') return methodNotAllowed(context, request, 'GET, POST');
    return finishLogin(context, request, provider);
  }
  if (method === 'POST') return exchangeToken(context, request, provider);
  if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(context, request, 'GET, HEAD, POST');
  return startLogin(
    context,
    request,
    provider,
    returnUrlParameter(request.searchParams, ['post_login_redirect_uri', 'post_login_redirect_url']),
  );
}

/**
 * The provider a sign-in path names. Its alias is matched without regard to case: links are
 * written by hand, and /.auth/login/AAD should not be a 404 beside /.auth/login/aad (the
 * configuration refuses aliases that differ only in case), and by another name the provider goes
 * by (OTHER_NAMES). A callback only at the exact path: that is the redirect URI the provider was given.
 */
function providerNamed(context: LayerContext, alias: string, callback: boolean): Provider | undefined {
  const { providers } = context;
  const exact = providers.get(alias);
  if (exact !== undefined || callback) return exact;
  const folded =
    aliasIgnoringCase(alias, providers) ?? aliasIgnoringCase(OTHER_NAMES[alias.toLowerCase()] ?? '', providers);
  return folded === undefined ? undefined : providers.get(folded);
}

function methodNotAllowed(context: LayerContext, request: RouteRequest, allow: string): Decision {
  context.logger.info(
    { reason: 'method not allowed', path: request.view.path, method: request.view.method },
    'request rejected',
  );
  return jsonDecision(405, { error: 'Method not allowed.' }, { headers: { Allow: allow } });
}
