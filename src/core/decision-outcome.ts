// What became of a request, in the few fixed words a metric may carry: the
// outcome, and its reason (which of gatehouse's own routes, why it was refused).
// Never a path, a user or anything else a caller chooses.
import type { Decision } from './http/request-view.js';

export type Outcome = 'forwarded' | 'challenged' | 'refused' | 'auth_route';

/** The route names of /.auth/*, by the first segment after the prefix (and the second for login and logout). */
function authRoute(route: string): string {
  const [, first, second, third] = route.split('/');
  switch (first) {
    case 'me':
    case 'refresh':
    case 'version':
      return second === undefined ? first : 'other';
    case 'login':
      if (second === 'done') return 'login_done';
      if (second === undefined) return 'other';
      return third === 'callback' ? 'login_callback' : 'login';
    case 'logout':
      if (second === undefined) return 'logout';
      if (second === 'complete' || second === 'done') return `logout_${second}`;
      return second === 'backchannel' ? 'logout_backchannel' : 'other';
    default:
      return 'other';
  }
}

const REFUSALS: ReadonlyMap<number, string> = new Map([
  [400, 'bad_request'],
  [403, 'forbidden'],
  [404, 'not_found'],
  [405, 'method_not_allowed'],
  [413, 'too_large'],
  [500, 'error'],
  [502, 'provider_unavailable'],
  [503, 'unavailable'],
]);

export function decisionOutcome(
  path: string,
  apiPrefix: string,
  decision: Decision,
): { outcome: Outcome; reason: string } {
  if (path === apiPrefix || path.startsWith(`${apiPrefix}/`))
    return { outcome: 'auth_route', reason: authRoute(path.slice(apiPrefix.length)) };
  if (decision.kind === 'forward')
    return { outcome: 'forwarded', reason: decision.identity === null ? 'anonymous' : 'signed_in' };
  if (decision.status === 401) return { outcome: 'challenged', reason: 'unauthorized' };
  // The sign-in redirect that keeps the URL fragment is a page (fragmentPreservingRedirect).
  if (decision.status === 200) return { outcome: 'challenged', reason: 'sign_in' };
  if (decision.status === 302 || decision.status === 307) {
    const location = decision.headers.Location;
    const toSignIn = typeof location === 'string' && location.startsWith(`${apiPrefix}/login/`);
    return toSignIn ? { outcome: 'challenged', reason: 'sign_in' } : { outcome: 'refused', reason: 'redirect' };
  }
  return { outcome: 'refused', reason: REFUSALS.get(decision.status) ?? 'other' };
}
