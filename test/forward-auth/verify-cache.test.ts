// gatehouse.verifyCache: which verify answers a web server may keep, and for how long, asked over
// HTTP as a web server asks, against a real OpenID provider; the rules themselves on decisions made
// by hand (a token's expiry against a given clock, a decision that narrows).
import { expect } from 'chai';

import type { AccessRule } from '../../src/core/authorization/access-rule.js';
import { pathRule } from '../../src/core/authorization/path-rule.js';
import type { AuthorizationPolicy } from '../../src/core/authorization/policy.js';
import { keptSeconds, rulesDifferByMethod } from '../../src/core/forward-auth/answer-lifetime.js';
import { verifyCacheSettings } from '../../src/core/forward-auth/cache-settings.js';
import { ForwardAuth } from '../../src/core/forward-auth/verify.js';
import { TrustedProxies } from '../../src/core/forward-auth/trusted-proxies.js';
import { AuthConfigError, resolveAuthConfig } from '../../src/core/config/auth-config.js';
import type { Decision, RequestView } from '../../src/core/http/request-view.js';
import { loadAddonCore } from '../../src/native/index.js';
import { Browser, type Response } from '../support/browser.js';
import { defaultDocument, signIn, startDeployment, type Deployment } from '../support/sign-in.js';

/** A JWT whose payload is `claims` (unsigned: the rules read its expiry of a token the decision verified). */
function jwt(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2ln`;
}

const ALLOWED: Decision = {
  kind: 'forward',
  identity: {
    provider: 'dev',
    userId: 'demo',
    userName: 'Dev User',
    authType: 'dev',
    nameType: 'name',
    roleType: 'roles',
    claims: [],
  },
  origin: { scheme: 'http', host: 'app.example' },
  edits: { remove: [], set: [], forwarded: { for: '', proto: 'http', host: 'app.example' } },
};

describe('forward auth: verify answers a web server may keep (gatehouse.verifyCache)', function () {
  this.timeout(30_000);

  describe('the setting', () => {
    function problems(verifyCache: unknown): readonly string[] {
      try {
        resolveAuthConfig(
          { ...defaultDocument('https://idp.example'), gatehouse: { verifyCache } },
          {
            TEST_CLIENT_SECRET: 's',
          },
        );
        return [];
      } catch (error) {
        if (error instanceof AuthConfigError) return error.problems;
        throw error;
      }
    }

    it('is off without the key; `{}` keeps an answer 1 s; maxAgeSeconds sets 1 to 60 whole seconds', () => {
      const config = (gatehouse: object) =>
        resolveAuthConfig({ ...defaultDocument('https://idp.example'), gatehouse }, { TEST_CLIENT_SECRET: 's' }).config
          .verifyCache;
      expect(config({})).to.equal(undefined);
      expect(config({ verifyCache: {} })).to.deep.equal({ maxAgeSeconds: 1 });
      expect(config({ verifyCache: { maxAgeSeconds: 60 } })).to.deep.equal({ maxAgeSeconds: 60 });
      for (const [value, expected] of [
        [0, 'at least 1 second'],
        [61, 'at most 60 seconds'],
        [1.5, 'whole number of seconds'],
        ['5', 'number'],
      ] as const) {
        const found = problems({ maxAgeSeconds: value });
        expect(found.join('\n'), String(value)).to.contain('gatehouse.verifyCache.maxAgeSeconds');
        expect(found.join('\n'), String(value)).to.contain(expected);
      }
    });
  });

  describe('the rules', () => {
    const settings = verifyCacheSettings({ maxAgeSeconds: 30 });
    const now = Date.UTC(2030, 0, 1);
    const at = (seconds: number) => Math.floor(now / 1000) + seconds;
    const headers = (...pairs: Array<[string, string]>) => ({ path: '/reports', headers: pairs });

    it('an allowed answer naming a caller is kept the configured lifetime; nothing is kept with the setting off', () => {
      expect(keptSeconds(ALLOWED, headers(['Cookie', 'PlatformAuthSession=x']), settings, now)).to.equal(30);
      expect(keptSeconds(ALLOWED, headers(['Cookie', 'PlatformAuthSession=x']), undefined, now)).to.equal(0);
    });

    it('an anonymous answer, a challenge or a refusal is never kept', () => {
      expect(keptSeconds({ ...ALLOWED, identity: null }, headers(), settings, now)).to.equal(0);
      for (const status of [302, 401, 403, 404, 500, 503])
        expect(
          keptSeconds({ kind: 'respond', status, headers: {} }, headers(), settings, now),
          String(status),
        ).to.equal(0);
    });

    it('a decision narrows the lifetime, never widens it: 0 is never kept', () => {
      expect(keptSeconds({ ...ALLOWED, cacheableForSeconds: 0 }, headers(), settings, now)).to.equal(0);
      expect(keptSeconds({ ...ALLOWED, cacheableForSeconds: 2.9 }, headers(), settings, now)).to.equal(2);
      expect(keptSeconds({ ...ALLOWED, cacheableForSeconds: 3600 }, headers(), settings, now)).to.equal(30);
    });

    it('a bearer answer is kept no longer than its token: one that expires sooner, or whose expiry is unknown, not at all', () => {
      const bearer = (token: string) => headers(['Authorization', `Bearer ${token}`]);
      expect(keptSeconds(ALLOWED, bearer(jwt({ exp: at(3600) })), settings, now)).to.equal(30);
      expect(keptSeconds(ALLOWED, bearer(jwt({ exp: at(10) })), settings, now)).to.equal(10);
      expect(keptSeconds(ALLOWED, bearer(jwt({ exp: at(0) })), settings, now)).to.equal(0);
      expect(keptSeconds(ALLOWED, bearer(jwt({ exp: at(-5) })), settings, now)).to.equal(0);
      expect(keptSeconds(ALLOWED, bearer(jwt({ sub: 'no expiry' })), settings, now)).to.equal(0);
      expect(keptSeconds(ALLOWED, bearer('an-opaque-token'), settings, now)).to.equal(0);
      // The scheme in any case, as the core reads it; another scheme is no bearer token.
      expect(keptSeconds(ALLOWED, headers(['authorization', `bEARER ${jwt({ exp: at(5) })}`]), settings, now)).to.equal(
        5,
      );
      expect(keptSeconds(ALLOWED, headers(['Authorization', 'Basic dXNlcjpwYXNz']), settings, now)).to.equal(30);
    });

    it('an answer on a path whose authorization rules differ by method is never kept; other paths are', () => {
      const rule = (name: string): AccessRule => ({ name, allow: [] });
      const policy: AuthorizationPolicy = {
        gates: new Map(),
        paths: [
          pathRule('/admin/*', ['POST', 'DELETE'], rule('paths[0]')),
          pathRule('/reports/*', ['GET'], rule('paths[1]')),
          pathRule('/reports/*', undefined, rule('paths[2]')),
          pathRule('/team/*', undefined, rule('paths[3]')),
        ],
        fallback: rule('default'),
      };
      const at = (path: string) => ({ path, headers: [] });
      for (const path of ['/admin/users', '/ADMIN/x', '/reports/q1', '/reports/q1/'])
        expect(keptSeconds(ALLOWED, at(path), settings, now, policy), path).to.equal(0);
      for (const path of ['/team/a', '/elsewhere', '/administrator'])
        expect(keptSeconds(ALLOWED, at(path), settings, now, policy), path).to.equal(30);
      // The same rule whatever the method: kept.
      const sameRule = rule('paths[0]');
      const both: AuthorizationPolicy = {
        ...policy,
        paths: [pathRule('/x/*', ['GET'], sameRule), pathRule('/x/*', undefined, sameRule)],
      };
      expect(rulesDifferByMethod(both, '/x/y')).to.equal(false);
      expect(rulesDifferByMethod({ ...policy, paths: [] }, '/admin/users')).to.equal(false);
    });

    it('an authentication token (X-ZUMO-AUTH) bounds the answer by its own expiry', () => {
      expect(keptSeconds(ALLOWED, headers(['X-ZUMO-AUTH', jwt({ exp: at(4) })]), settings, now)).to.equal(4);
      expect(keptSeconds(ALLOWED, headers(['x-zumo-auth', 'garbage']), settings, now)).to.equal(0);
    });
  });

  describe('over HTTP', () => {
    let deployment: Deployment;
    let host: string;
    let cookie: string;
    let idToken: string;

    before(async () => {
      deployment = await startDeployment({
        document: (issuer) => ({ ...defaultDocument(issuer), gatehouse: { verifyCache: { maxAgeSeconds: 5 } } }),
      });
      host = new URL(deployment.url).host;
      const browser = new Browser();
      const { final } = await signIn(browser, deployment);
      idToken = (JSON.parse(final.body) as { headers: Record<string, string> }).headers[
        'x-platform-token-dev-id-token'
      ]!;
      cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    });
    after(() => deployment?.close());

    function verify(
      convention: 'nginx' | 'forwarded',
      uri: string,
      headers: Record<string, string> = {},
    ): Promise<Response> {
      const original =
        convention === 'nginx'
          ? { 'x-original-uri': uri, 'x-original-method': 'GET' }
          : { 'x-forwarded-uri': uri, 'x-forwarded-method': 'GET' };
      return new Browser().request(`${deployment.url}/.auth/verify`, {
        headers: { 'x-forwarded-host': host, 'x-forwarded-proto': 'http', ...original, ...headers },
      });
    }

    for (const convention of ['nginx', 'forwarded'] as const) {
      it(`${convention}: a session's allowed answer says how long it may be kept, with the identity`, async () => {
        const answer = await verify(convention, '/reports', { cookie });
        expect(answer.status).to.equal(200);
        expect(answer.headers).to.include({
          'cache-control': 'private, max-age=5',
          'x-accel-expires': '5',
          'x-platform-client-principal-id': 'demo',
        });
        // The same identity, asked again: the same marking.
        expect((await verify(convention, '/other', { cookie })).headers['x-accel-expires']).to.equal('5');
      });

      it(`${convention}: a bearer answer is kept no longer than its token, which outlives the lifetime here`, async () => {
        const answer = await verify(convention, '/api/orders', {
          authorization: `Bearer ${idToken}`,
          accept: 'application/json',
        });
        expect(answer.status).to.equal(200);
        expect(answer.headers['x-accel-expires']).to.equal('5');
      });

      it(`${convention}: an anonymous answer, a challenge and every refusal say they may not be kept`, async () => {
        const answers = [
          await verify(convention, '/public/logo.png'),
          await verify(convention, '/reports'),
          await verify(convention, '/reports', { accept: 'application/json' }),
          await verify(convention, '/reports', { cookie: 'PlatformAuthSession=forged' }),
          await verify(convention, '/reports', { cookie, 'x-platform-client-principal-id': 'admin' }),
          await verify(convention, '/reports', { cookie, upgrade: 'h2c', connection: 'Upgrade, HTTP2-Settings' }),
          await verify(convention, '/.auth/logout', { cookie }),
          await verify(convention, 'http://evil.example/', { cookie }),
          await verify(convention, '/reports', { cookie, authorization: 'Bearer not-a-token' }),
        ];
        expect(answers.map((a) => a.status)).to.deep.equal(
          convention === 'nginx'
            ? [200, 401, 401, 401, 403, 401, 403, 400, 401]
            : [200, 302, 401, 302, 403, 400, 403, 400, 401],
        );
        for (const answer of answers) {
          expect(answer.headers['x-accel-expires'], String(answer.status)).to.equal('0');
          expect(answer.headers['cache-control'] ?? '', String(answer.status)).not.to.contain('max-age');
        }
      });
    }

    it('a bearer token that expires sooner than the lifetime: not kept; with one second more than the lifetime: kept whole', async () => {
      const exp = (JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;
      const ask = async (nowMs: number) => {
        const forwardAuth = new ForwardAuth({
          layer: deployment.gateway.layer,
          trustedProxies: TrustedProxies.parse(),
          headers: loadAddonCore(),
          now: () => nowMs,
        });
        const view: RequestView = {
          method: 'GET',
          path: '/.auth/verify',
          query: '',
          headers: [
            ['X-Original-URI', '/api/orders'],
            ['X-Original-Method', 'GET'],
            ['X-Forwarded-Host', host],
            ['X-Forwarded-Proto', 'http'],
            ['Authorization', `Bearer ${idToken}`],
          ],
          scheme: 'http',
          host,
          remoteAddress: '127.0.0.1',
          readBody: () => Promise.reject(new Error('no body')),
        };
        const answer = await forwardAuth.answer(view);
        expect(answer.status).to.equal(200);
        return answer.headers['X-Accel-Expires'];
      };
      expect(await ask((exp - 6) * 1000)).to.equal('5');
      expect(await ask((exp - 3) * 1000)).to.equal('3');
      expect(await ask((exp - 0.5) * 1000)).to.equal('0');
    });
  });

  it('over HTTP, a path whose rules differ by method: allowed but not kept; other paths kept', async () => {
    const deployment = await startDeployment({
      document: (issuer) => ({
        ...defaultDocument(issuer),
        gatehouse: {
          verifyCache: {},
          authorization: {
            paths: [
              { path: '/reports', methods: ['POST'], allow: [{ subjects: ['someone-else'] }] },
              { path: '/team/*', allow: [{ subjects: ['demo'] }] },
            ],
          },
        },
      }),
    });
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      const cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
      const ask = (uri: string, method: string) =>
        new Browser().request(`${deployment.url}/.auth/verify`, {
          headers: {
            'x-forwarded-host': new URL(deployment.url).host,
            'x-forwarded-proto': 'http',
            'x-original-uri': uri,
            'x-original-method': method,
            cookie,
          },
        });
      const get = await ask('/reports', 'GET');
      expect(get.status).to.equal(200);
      expect(get.headers['x-platform-client-principal-id']).to.equal('demo');
      expect(get.headers['x-accel-expires']).to.equal('0');
      expect((await ask('/reports', 'POST')).status).to.equal(403);
      const team = await ask('/team/board', 'GET');
      expect(team.status).to.equal(200);
      expect(team.headers['x-accel-expires']).to.equal('1');
    } finally {
      await deployment.close();
    }
  });

  it('with the setting off, no answer carries a lifetime or X-Accel-Expires', async () => {
    const deployment = await startDeployment();
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      const cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
      const answer = await new Browser().request(`${deployment.url}/.auth/verify`, {
        headers: {
          'x-forwarded-host': new URL(deployment.url).host,
          'x-forwarded-proto': 'http',
          'x-original-uri': '/reports',
          'x-original-method': 'GET',
          cookie,
        },
      });
      expect(answer.status).to.equal(200);
      expect(answer.headers['cache-control']).to.equal('no-store');
      expect(answer.headers).not.to.have.property('x-accel-expires');
    } finally {
      await deployment.close();
    }
  });
});
