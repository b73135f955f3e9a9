// The authentication session and token lifecycle (docs/architecture.md#sessions-and-the-token-store),
// written once, as data, and the assessment of a presented session that picks its transitions.
// A protected request's session is taken through it by the auth layer, which picks each
// transition from the facts and does the transition's effect; the rows of the
// sign-in callback and of logout say what those routes do. Nothing else decides which state
// follows which.
import type { SessionRecord } from './record.js';

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

export interface AssessmentContext {
  readonly now: number;
  readonly app: string;
  /** Fingerprints of the current provider configurations, by provider alias. */
  readonly configFingerprints: ReadonlyMap<string, string>;
  /** The host of this request (already validated). */
  readonly host: string;
  /** Refresh when the access token expires within this many ms. */
  readonly refreshWindowMs: number;
  /** Unused for longer than the idle timeout (activity.ts). */
  readonly idle?: boolean;
}

export type Assessment =
  | { readonly kind: 'valid' }
  | { readonly kind: 'expiring' }
  | { readonly kind: 'reauth'; readonly reason: ReauthReason };

/**
 * A cookie alone never authenticates: the record must exist, decrypt (the
 * store returns undefined otherwise), belong to this app, be within its
 * lifetime, match the provider configuration of today and the host it was
 * established on.
 */
export function assessSession(record: SessionRecord | undefined, context: AssessmentContext): Assessment {
  if (record === undefined) return { kind: 'reauth', reason: 'record-missing' };
  if (record.app !== context.app) return { kind: 'reauth', reason: 'record-of-another-app' };
  // Before the expiry: an idle session is not one the refresh extension may renew.
  if (context.idle === true) return { kind: 'reauth', reason: 'idle-timeout' };
  if (record.expiresAt <= context.now) return { kind: 'reauth', reason: 'cookie-expired' };
  if (context.configFingerprints.get(record.provider) !== record.configFingerprint) {
    return { kind: 'reauth', reason: 'configuration-changed' };
  }
  if (record.host.toLowerCase() !== context.host.toLowerCase())
    return { kind: 'reauth', reason: 'callback-host-mismatch' };
  const expiresAt = record.tokens.accessTokenExpiresAt;
  if (expiresAt !== undefined && expiresAt - context.refreshWindowMs <= context.now) return { kind: 'expiring' };
  return { kind: 'valid' };
}

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
