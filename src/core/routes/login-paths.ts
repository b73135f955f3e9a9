// Where sign-in starts and comes back: the paths of /.auth/login/<provider>, its callback and
// the done page, and the links gatehouse's pages offer to sign in (again).
import type { PageLink } from '../http/responses.js';
import type { AccountPrompt } from '../providers/provider.js';
import type { LayerContext } from './context.js';

export function returnUrlParameter(params: URLSearchParams, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = params.get(name);
    if (value !== null) return value;
  }
  return undefined;
}

/**
 * The way on from a sign-in that failed or was refused: a link that starts a new one, to where the
 * failed one was going (`returnTo`: a return URL validated when that sign-in started, when one is
 * known). A person on such a page otherwise has nowhere to go but the address bar, and nothing
 * there says where sign-in starts. A link, never an automatic restart: a sign-in that fails every
 * time (a browser that keeps no cookies, an account the policy refuses) must not become a loop.
 */
export function signInAgain(
  context: LayerContext,
  alias: string,
  text: string,
  returnTo?: string,
  prompt?: AccountPrompt,
): PageLink {
  return {
    href: loginPath(
      context.config.apiPrefix,
      alias,
      returnTo === loginDonePath(context) ? undefined : returnTo,
      prompt,
    ),
    text,
  };
}

/**
 * Where a sign-in with `alias` starts; it comes back to `returnTo` when given (the login route validates it), else to the
 * done page; `prompt` asks the provider to let the person choose the account.
 */
export function loginPath(apiPrefix: string, alias: string, returnTo?: string, prompt?: AccountPrompt): string {
  const query = [
    ...(returnTo !== undefined ? [`post_login_redirect_uri=${encodeURIComponent(returnTo)}`] : []),
    ...(prompt !== undefined ? [`prompt=${prompt}`] : []),
  ];
  const start = `${apiPrefix}/login/${alias}`;
  return query.length === 0 ? start : `${start}?${query.join('&')}`;
}

/** Where a sign-in lands unless it asks for (and is allowed) another address. */
export function loginDonePath(context: LayerContext): string {
  return `${context.config.apiPrefix}/login/done`;
}

export function callbackPath(context: LayerContext, alias: string): string {
  return `${loginPath(context.config.apiPrefix, alias)}/callback`;
}
