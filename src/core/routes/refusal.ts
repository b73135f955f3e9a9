// The answer to a signed-in caller an authorization rule turns away: 403,
// a page for a person (who they are signed in as, and a way to sign in with
// another account) or JSON for an API caller; logged with the rule and the
// user's id, counted by reason (docs/endpoints.md, "403 Not allowed").
import type { Caller } from '../authorization/access-facts.js';
import type { Refusal } from '../authorization/authorizer.js';
import type { Decision, RouteRequest } from '../http/request-view.js';
import { errorDecision, jsonDecision, type PageLink } from '../http/responses.js';
import { challengeReturnUrl } from '../return-url.js';
import type { LayerContext } from './context.js';
import { loginPath } from './login-paths.js';

/** How the caller proved who they are: a session (cookie or authentication token), or a provider's bearer token. */
export type CallerCredential = 'session' | 'bearer';

export function refusalDecision(
  context: LayerContext,
  request: RouteRequest,
  caller: Caller,
  refusal: Refusal,
  credential: CallerCredential,
): Decision {
  const { config, logger, metrics, providers } = context;
  const { view } = request;
  logger.info(
    {
      reason: refusal.reason,
      rule: refusal.rule.name,
      provider: caller.provider,
      userId: caller.userId,
      path: view.path,
      method: view.method,
      ...(refusal.reason === 'groups_incomplete' && caller.access.groupsIncomplete !== undefined
        ? { groups: caller.access.groupsIncomplete }
        : {}),
    },
    'request refused by an authorization rule',
  );
  metrics.authorizationRefused(refusal.reason, refusal.rule.name);
  const incomplete =
    refusal.reason === 'groups_incomplete' ? ' Your groups could not all be read from your identity provider.' : '';
  if (credential === 'bearer')
    return jsonDecision(403, {
      error: 'forbidden',
      error_description: `The token is valid but not allowed here.${incomplete}`,
    });
  if (request.json) return errorDecision(403, 'Not allowed', `You are not allowed here.${incomplete}`, true);
  const provider = providers.get(caller.provider);
  const returnTo = challengeReturnUrl(view.path, view.query, config.apiPrefix);
  const links: PageLink[] = [
    ...(provider !== undefined
      ? [
          {
            // The provider would sign the same account in again unless asked to let the person choose.
            href: loginPath(config.apiPrefix, provider.alias, returnTo, 'select_account'),
            text: 'Sign in with another account',
          },
        ]
      : []),
    { href: `${config.apiPrefix}/logout`, text: 'Sign out' },
  ];
  const who = provider !== undefined ? `${caller.userName} (${provider.displayName})` : caller.userName;
  return errorDecision(
    403,
    'Not allowed',
    `You are signed in as ${who}, who may not open this page.${incomplete}`,
    false,
    {},
    links,
  );
}
