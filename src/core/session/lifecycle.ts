// The authentication session and token lifecycle (docs/architecture.md#sessions-and-the-token-store),
// written once, as data. A protected request's session is taken through it by the auth layer,
// which picks each transition from the facts and does the transition's effect; the rows of the
// sign-in callback and of logout say what those routes do. Nothing else decides which state
// follows which.

export const SESSION_STATES = [
  'Unauthenticated',
  'Challenged',
  'AuthenticatedSession',
  'AccessTokenValid',
  'AccessTokenExpiring',
  'Refreshed',
  'ReauthRequired',
  'SignedOut',
] as const;
export type SessionState = (typeof SESSION_STATES)[number];

export type LifecycleTrigger =
  | 'start'
  | 'protectedRequest'
  | 'callbackSucceeded'
  | 'sessionChecked'
  | 'timePasses'
  | 'refreshSucceeded'
  | 'automatic'
  | 'refreshFailed'
  | 'refreshDeferred'
  | 'nextRequest'
  | 'logout'
  | 'sessionInvalidated';

/** What the layer does when a transition is taken (`redirectToProvider`: the challenge, whichever unauthenticatedAction says). */
export type LifecycleEffect =
  'none' | 'redirectToProvider' | 'storeTokensAndSetCookie' | 'forwardWithIdentity' | 'refreshTokens' | 'deleteSession';

export interface Transition {
  readonly from: SessionState | null; // null: the initial pseudo-state
  readonly trigger: LifecycleTrigger;
  readonly condition: string;
  readonly to: SessionState;
  readonly effect: LifecycleEffect;
}

/** Why a session must sign in again (docs/architecture.md#sessions-and-the-token-store). */
export type ReauthReason =
  | 'cookie-expired'
  | 'idle-timeout'
  | 'cookie-invalid'
  | 'record-missing'
  | 'record-of-another-app'
  | 'provider-revoked'
  | 'refresh-unavailable'
  | 'configuration-changed'
  | 'callback-host-mismatch';

export const LIFECYCLE: readonly Transition[] = [
  { from: null, trigger: 'start', condition: '', to: 'Unauthenticated', effect: 'none' },
  {
    from: 'Unauthenticated',
    trigger: 'protectedRequest',
    condition: '',
    to: 'Challenged',
    effect: 'redirectToProvider',
  },
  {
    from: 'Challenged',
    trigger: 'callbackSucceeded',
    condition: 'sign-in and consent succeed; callback carries an authorization code',
    to: 'AuthenticatedSession',
    effect: 'storeTokensAndSetCookie',
  },
  {
    from: 'AuthenticatedSession',
    trigger: 'sessionChecked',
    condition: 'session cookie and token store both valid',
    to: 'AccessTokenValid',
    effect: 'forwardWithIdentity',
  },
  {
    from: 'AccessTokenValid',
    trigger: 'timePasses',
    condition: 'access token nears or passes expiry',
    to: 'AccessTokenExpiring',
    effect: 'refreshTokens',
  },
  {
    from: 'AccessTokenExpiring',
    trigger: 'refreshSucceeded',
    condition: '/.auth/refresh or implicit refresh succeeds',
    to: 'Refreshed',
    effect: 'none',
  },
  { from: 'Refreshed', trigger: 'automatic', condition: '', to: 'AccessTokenValid', effect: 'forwardWithIdentity' },
  {
    from: 'AccessTokenExpiring',
    trigger: 'refreshFailed',
    condition: 'no refresh token, refresh unavailable or refused',
    to: 'ReauthRequired',
    effect: 'deleteSession',
  },
  {
    from: 'AccessTokenExpiring',
    trigger: 'refreshDeferred',
    condition: 'the provider cannot be reached and the access token is still valid: tried again on the next request',
    to: 'AccessTokenValid',
    effect: 'forwardWithIdentity',
  },
  { from: 'ReauthRequired', trigger: 'nextRequest', condition: '', to: 'Challenged', effect: 'redirectToProvider' },
  {
    from: 'AuthenticatedSession',
    trigger: 'logout',
    condition: '/.auth/logout or provider logout',
    to: 'SignedOut',
    effect: 'deleteSession',
  },
  { from: 'SignedOut', trigger: 'automatic', condition: '', to: 'Unauthenticated', effect: 'none' },
  // Re-authentication triggers: the session record stops counting, whatever its token state.
  {
    from: 'AuthenticatedSession',
    trigger: 'sessionInvalidated',
    condition: 'cookie timeout or invalidation, revocation, configuration change, callback host mismatch',
    to: 'ReauthRequired',
    effect: 'deleteSession',
  },
  {
    from: 'AccessTokenValid',
    trigger: 'sessionInvalidated',
    condition: 'as above',
    to: 'ReauthRequired',
    effect: 'deleteSession',
  },
  {
    from: 'AccessTokenExpiring',
    trigger: 'sessionInvalidated',
    condition: 'as above',
    to: 'ReauthRequired',
    effect: 'deleteSession',
  },
];

export class LifecycleError extends Error {}

/** The transition `trigger` takes from `from`; an event the table does not allow is a bug. */
export function transition(from: SessionState | null, trigger: LifecycleTrigger): Transition {
  const found = BY_STATE.get(from)?.get(trigger);
  if (found === undefined) throw new LifecycleError(`no transition from ${from ?? '(initial)'} on ${trigger}`);
  return found;
}

/** The table indexed by state, then trigger (taken on every signed-in request); a duplicate pair is a bug in the table. */
const BY_STATE = new Map<SessionState | null, Map<LifecycleTrigger, Transition>>();
for (const t of LIFECYCLE) {
  const byTrigger = BY_STATE.get(t.from) ?? new Map<LifecycleTrigger, Transition>();
  if (byTrigger.has(t.trigger))
    throw new LifecycleError(`two transitions from ${t.from ?? '(initial)'} on ${t.trigger}`);
  BY_STATE.set(t.from, byTrigger.set(t.trigger, t));
}
