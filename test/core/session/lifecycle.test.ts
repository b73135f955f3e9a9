import { expect } from 'chai';

import {
  assessSession,
  LIFECYCLE,
  LifecycleError,
  SESSION_STATES,
  transition,
  type AssessmentContext,
  type LifecycleTrigger,
  type SessionState,
} from '../../../src/core/session/lifecycle.js';
import type { SessionRecord } from '../../../src/core/session/record.js';

describe('session lifecycle table (docs/architecture.md#sessions-and-the-token-store)', () => {
  // One expectation per row of the table (lifecycle.ts), spelled out independently of the data.
  const rows: Array<[SessionState | null, LifecycleTrigger, SessionState, string]> = [
    [null, 'start', 'Unauthenticated', 'none'],
    ['Unauthenticated', 'protectedRequest', 'Challenged', 'redirectToProvider'],
    ['Challenged', 'callbackSucceeded', 'AuthenticatedSession', 'storeTokensAndSetCookie'],
    ['AuthenticatedSession', 'sessionChecked', 'AccessTokenValid', 'forwardWithIdentity'],
    ['AccessTokenValid', 'timePasses', 'AccessTokenExpiring', 'refreshTokens'],
    ['AccessTokenExpiring', 'refreshSucceeded', 'Refreshed', 'none'],
    ['Refreshed', 'automatic', 'AccessTokenValid', 'forwardWithIdentity'],
    ['AccessTokenExpiring', 'refreshFailed', 'ReauthRequired', 'deleteSession'],
    ['AccessTokenExpiring', 'refreshDeferred', 'AccessTokenValid', 'forwardWithIdentity'],
    ['ReauthRequired', 'nextRequest', 'Challenged', 'redirectToProvider'],
    ['AuthenticatedSession', 'logout', 'SignedOut', 'deleteSession'],
    ['SignedOut', 'automatic', 'Unauthenticated', 'none'],
  ];
  for (const [from, trigger, to, effect] of rows) {
    it(`${from ?? '(initial)'} --${trigger}--> ${to}`, () => {
      const t = transition(from, trigger);
      expect(t.to).to.equal(to);
      expect(t.effect).to.equal(effect);
    });
  }

  for (const from of ['AuthenticatedSession', 'AccessTokenValid', 'AccessTokenExpiring'] as const) {
    it(`${from} --sessionInvalidated--> ReauthRequired (re-authentication triggers)`, () => {
      expect(transition(from, 'sessionInvalidated')).to.include({ to: 'ReauthRequired', effect: 'deleteSession' });
    });
  }

  it('has no other transitions, no duplicates, and only known states', () => {
    expect(LIFECYCLE).to.have.length(rows.length + 3);
    const keys = LIFECYCLE.map((t) => `${t.from}|${t.trigger}`);
    expect(new Set(keys).size).to.equal(keys.length);
    for (const t of LIFECYCLE) {
      expect(SESSION_STATES).to.include(t.to);
      if (t.from !== null) expect(SESSION_STATES).to.include(t.from);
    }
    // Every state is reachable and every state can be left.
    for (const state of SESSION_STATES) {
      expect(
        LIFECYCLE.some((t) => t.to === state),
        `${state} reachable`,
      ).to.equal(true);
      expect(
        LIFECYCLE.some((t) => t.from === state),
        `${state} leavable`,
      ).to.equal(true);
    }
  });

  it('refuses events the table does not allow', () => {
    expect(() => transition('Unauthenticated', 'refreshSucceeded')).to.throw(LifecycleError);
    expect(() => transition('SignedOut', 'sessionChecked')).to.throw(LifecycleError);
  });
});

describe('session assessment: a cookie alone never authenticates', () => {
  const now = 1_800_000_000_000;
  const context: AssessmentContext = {
    now,
    app: 'app-1',
    configFingerprints: new Map([['oidc', 'fp-1']]),
    host: 'app.example.com',
    refreshWindowMs: 5 * 60_000,
  };
  const record: SessionRecord = {
    app: 'app-1',
    provider: 'oidc',
    userId: 'u',
    userName: 'n',
    nameType: 'name',
    roleType: 'roles',
    claims: [],
    tokens: { accessToken: 'a', refreshToken: 'r', accessTokenExpiresAt: now + 3_600_000 },
    createdAt: now - 1000,
    expiresAt: now + 8 * 3_600_000,
    configFingerprint: 'fp-1',
    host: 'app.example.com',
  };

  it('a valid record in its lifetime is valid', () => {
    expect(assessSession(record, context)).to.deep.equal({ kind: 'valid' });
    expect(assessSession({ ...record, host: 'APP.example.com' }, context)).to.deep.equal({ kind: 'valid' });
  });

  it('an access token within the refresh window is expiring', () => {
    expect(
      assessSession({ ...record, tokens: { ...record.tokens, accessTokenExpiresAt: now + 60_000 } }, context),
    ).to.deep.equal({ kind: 'expiring' });
    expect(
      assessSession({ ...record, tokens: { ...record.tokens, accessTokenExpiresAt: now - 1 } }, context),
    ).to.deep.equal({ kind: 'expiring' });
  });

  const reauth: Array<[string, SessionRecord | undefined, Partial<AssessmentContext>, string]> = [
    ['cookie invalidated: no record behind it (revoked, logged out, unreadable)', undefined, {}, 'record-missing'],
    ['cookie timeout', { ...record, expiresAt: now }, {}, 'cookie-expired'],
    ['a record of another app', { ...record, app: 'app-2' }, {}, 'record-of-another-app'],
    [
      'configuration change: client id, issuer, audiences or signing metadata',
      record,
      { configFingerprints: new Map([['oidc', 'fp-2']]) },
      'configuration-changed',
    ],
    ['configuration change: provider removed', record, { configFingerprints: new Map() }, 'configuration-changed'],
    ['callback host mismatch (slot swap)', record, { host: 'staging.example.com' }, 'callback-host-mismatch'],
  ];
  for (const [name, r, ctx, reason] of reauth) {
    it(`re-authenticates on ${name}`, () => {
      expect(assessSession(r, { ...context, ...ctx })).to.deep.equal({ kind: 'reauth', reason });
    });
  }
});
