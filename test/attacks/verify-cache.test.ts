// A hostile client against cacheable verify answers (docs/forward-auth.md#caching-verify-answers):
// which answers a web server is told it may keep, and for how long.
import { expect } from 'chai';
import { UnsecuredJWT } from 'jose';

import type { AccessRule } from '../../src/core/authorization/access-rule.js';
import { pathRule } from '../../src/core/authorization/path-rule.js';
import type { AuthorizationPolicy } from '../../src/core/authorization/policy.js';
import { keptSeconds } from '../../src/core/forward-auth/answer-lifetime.js';
import type { Decision } from '../../src/core/http/request-view.js';
import type { Identity } from '../../src/core/identity.js';

const NOW = 1_800_000_000_000;
const settings = { maxAgeSeconds: 60 };
const someone = { userId: 'u1' } as unknown as Identity;

function forward(identity: Identity | null, cacheableForSeconds?: number): Decision {
  return {
    kind: 'forward',
    identity,
    origin: { scheme: 'https', host: 'app.example' },
    edits: {},
    ...(cacheableForSeconds !== undefined ? { cacheableForSeconds } : {}),
  } as unknown as Decision;
}

const request = (path: string, headers: Array<[string, string]> = []) => ({ path, headers });
const jwt = (expInSeconds: number) =>
  new UnsecuredJWT({ sub: 'u1' }).setExpirationTime(Math.floor(NOW / 1000) + expInSeconds).encode();

describe('attacks on cacheable verify answers', () => {
  it('an anonymous answer, a refusal and a challenge are never kept', () => {
    expect(keptSeconds(forward(null), request('/'), settings, NOW)).to.equal(0);
    const refusal: Decision = { kind: 'respond', status: 403, headers: {} };
    expect(keptSeconds(refusal, request('/'), settings, NOW)).to.equal(0);
    const challenge: Decision = { kind: 'respond', status: 401, headers: {} };
    expect(keptSeconds(challenge, request('/'), settings, NOW)).to.equal(0);
  });

  it('nothing is kept without verifyCache, whatever the decision asks', () => {
    expect(keptSeconds(forward(someone, 30), request('/'), undefined, NOW)).to.equal(0);
  });

  it('a bearer token bounds the answer by its expiry, in any spelling of the scheme and header name', () => {
    for (const [name, value] of [
      ['Authorization', `Bearer ${jwt(5)}`],
      ['AUTHORIZATION', `bearer ${jwt(5)}`],
      ['authorization', `BEARER  ${jwt(5)} `],
    ] as const)
      expect(keptSeconds(forward(someone), request('/', [[name, value]]), settings, NOW), value).to.equal(5);
  });

  it('an expired, opaque or unreadable bearer token is never kept (only its own expiry could bound it)', () => {
    for (const token of [jwt(-1), 'opaque-token', 'a.b.c'])
      expect(
        keptSeconds(forward(someone), request('/', [['Authorization', `Bearer ${token}`]]), settings, NOW),
        token,
      ).to.equal(0);
  });

  it('the first of two Authorization headers bounds the answer, as it is the one the decision read', () => {
    const headers: Array<[string, string]> = [
      ['Authorization', `Bearer ${jwt(3)}`],
      ['Authorization', `Bearer ${jwt(50)}`],
    ];
    expect(keptSeconds(forward(someone), request('/', headers), settings, NOW)).to.equal(3);
  });

  it('an authentication token bounds the answer by its expiry; one without an expiry is never kept', () => {
    expect(keptSeconds(forward(someone), request('/', [['X-ZUMO-AUTH', jwt(7)]]), settings, NOW)).to.equal(7);
    expect(keptSeconds(forward(someone), request('/', [['x-zumo-auth', 'not-a-jwt']]), settings, NOW)).to.equal(0);
  });

  it('a decision that says it may not be kept is not, nor longer than it says', () => {
    expect(keptSeconds(forward(someone, 0), request('/'), settings, NOW)).to.equal(0);
    expect(keptSeconds(forward(someone, 2.9), request('/'), settings, NOW)).to.equal(2);
  });

  // A path that cannot be read unambiguously (`//admin/x`) is judged by every rule for every
  // method, so its answer does not depend on the method and may be kept.
  it('a path whose rules differ by method is never kept, in any spelling that folds into it', () => {
    const admins: AccessRule = { name: 'paths[0]', allow: [{ groups: new Set(['admins']) }] };
    const policy: AuthorizationPolicy = {
      gates: new Map(),
      paths: [pathRule('/admin/*', ['DELETE'], admins)],
      fallback: undefined,
    };
    for (const path of ['/admin/x', '/ADMIN/x', '/%61dmin/x', '/admin/', '/ａｄｍｉｎ/x'])
      expect(keptSeconds(forward(someone), request(path), settings, NOW, policy), path).to.equal(0);
    expect(keptSeconds(forward(someone), request('/public'), settings, NOW, policy)).to.equal(60);
  });
});
