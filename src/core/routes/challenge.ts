// A challenge: what a protected request without a usable session gets, as
// unauthenticatedAction says (a redirect to sign in, a page of sign-in links, 401, 403 or 404).
import type { Decision, RouteRequest, Verdict } from '../http/request-view.js';
import {
  errorDecision,
  escapeHtml,
  fragmentPreservingRedirect,
  pageDecision,
  redirectDecision,
  type PageLink,
} from '../http/responses.js';
import { challengeReturnUrl } from '../return-url.js';
import type { LayerContext } from './context.js';
import { loginPath } from './login-paths.js';

/** The icons browsers fetch unasked (/favicon.ico, Safari's apple-touch-icon*.png). */
const BROWSER_ICON = /^\/(?:favicon\.ico|apple-touch-icon[\w-]*\.png)$/;

export function challenge(context: LayerContext, request: RouteRequest, reason: string, clearCookie: boolean): Verdict {
  const { config, logger, sessionCookie } = context;
  const { view } = request;
  // Anonymous callers may come in unless a rule says who may open this path: then they sign in first.
  if (!config.requireAuthentication && !context.authorizer.restrictsPath(view.method, view.path))
    return { kind: 'forward', identity: null };
  const cookies = clearCookie ? [sessionCookie.clear(request.secure)] : [];
  // A browser asks for its icons by itself on every new site: those challenges are not news.
  const level = BROWSER_ICON.test(view.path) ? 'debug' : 'info';
  logger[level](
    { reason, path: view.path, method: view.method, action: config.unauthenticatedAction },
    'request challenged',
  );
  switch (config.unauthenticatedAction) {
    case 'Return403':
      return errorDecision(403, 'Forbidden', 'You do not have access to this resource.', request.json, { cookies });
    case 'Return404':
      return errorDecision(404, 'Not found', 'Not found.', request.json, { cookies });
    case 'Return401':
    case 'AllowAnonymous':
      return unauthorized(context, request, cookies);
    case 'RedirectToLoginPage':
      break;
  }
  if (request.json || (view.method !== 'GET' && view.method !== 'HEAD')) return unauthorized(context, request, cookies);
  const returnTo = challengeReturnUrl(view.path, view.query, config.apiPrefix);
  if (config.defaultProvider !== undefined) {
    // The fragment is added in the browser: the page's script ends the URL with the return address.
    if (config.preserveUrlFragmentsForLogins)
      return fragmentPreservingRedirect(
        `${loginPath(config.apiPrefix, config.defaultProvider)}?post_login_redirect_uri=`,
        returnTo,
        cookies,
      );
    return redirectDecision(loginPath(config.apiPrefix, config.defaultProvider, returnTo), { cookies });
  }
  const links = signInLinks(context, returnTo).map(
    (link) => `<li><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></li>`,
  );
  return pageDecision(401, 'Sign in', 'Choose how to sign in:', { cookies }, `<ul>${links.join('')}</ul>`);
}

/** A sign-in link per configured provider, coming back to `returnTo` when given. */
export function signInLinks(context: LayerContext, returnTo?: string): PageLink[] {
  const { config, providers } = context;
  return [...providers.values()].map((provider) => ({
    href: loginPath(config.apiPrefix, provider.alias, returnTo),
    text: `Sign in with ${provider.displayName}`,
  }));
}

/**
 * A 401. A person in a browser gets a page with a way to sign in and come back: a form POSTed
 * after the session ended (challenges redirect GET and HEAD only) or a site set to Return401
 * otherwise leaves them on "Authentication required" with nowhere to go. The links are only
 * links: nothing is followed without them.
 */
function unauthorized(context: LayerContext, request: RouteRequest, cookies: string[]): Decision {
  const extra = { cookies, headers: { 'WWW-Authenticate': 'Bearer' } };
  if (request.json) return errorDecision(401, 'Sign-in required', 'Authentication required.', true, extra);
  const { config } = context;
  const returnTo = challengeReturnUrl(request.view.path, request.view.query, config.apiPrefix);
  const links =
    config.defaultProvider !== undefined
      ? [{ href: loginPath(config.apiPrefix, config.defaultProvider, returnTo), text: 'Sign in' }]
      : signInLinks(context, returnTo);
  return errorDecision(401, 'Sign-in required', 'Authentication required.', false, extra, links);
}
