// The app never sees a request gatehouse refuses, so gatehouse logs each one:
// why, and where (the path, never the query), and never a secret.
import http from 'node:http';

import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { raw } from '../support/raw-http.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';

describe('every refused request is logged, without secrets', function () {
  this.timeout(30_000);
  let logs: CapturedLogs;
  let deployment: Deployment;
  before(async () => {
    logs = capturingLogger('info');
    deployment = await startDeployment({ logger: logs.logger });
  });
  after(() => deployment.close());

  const api = () => {
    const browser = new Browser();
    browser.accept = 'application/json';
    return browser;
  };

  /** One refusal: what is sent, the status it gets, and the log line it must leave. */
  interface Case {
    readonly name: string;
    readonly send: () => Promise<{ status: number }>;
    readonly status: number;
    readonly msg: string;
    readonly reason: RegExp;
    readonly path: string;
  }

  const cases: Case[] = [
    {
      name: 'an invalid Host header',
      send: () =>
        new Promise((resolve, reject) => {
          const { port } = new URL(deployment.url);
          http
            .get(
              { host: '127.0.0.1', port, path: '/protected', headers: { host: 'bad host' }, agent: false },
              (res) => {
                res.resume();
                resolve({ status: res.statusCode ?? 0 });
              },
            )
            .on('error', reject);
        }),
      status: 400,
      msg: 'request rejected',
      reason: /^invalid host$/,
      path: '/protected',
    },
    {
      name: 'no session (browser)',
      send: () => new Browser().request(`${deployment.url}/protected?secret-query=1`),
      status: 302,
      msg: 'request challenged',
      reason: /^no session$/,
      path: '/protected',
    },
    {
      name: 'no session (API)',
      send: () => api().request(`${deployment.url}/api/orders`),
      status: 401,
      msg: 'request challenged',
      reason: /^no session$/,
      path: '/api/orders',
    },
    {
      name: 'a forged session cookie',
      send: () =>
        api().request(`${deployment.url}/protected`, {
          headers: { cookie: 'PlatformAuthSession=forged-cookie-value' },
        }),
      status: 401,
      msg: 'request challenged',
      reason: /^session cookie invalid$/,
      path: '/protected',
    },
    {
      name: 'a bearer token that is not a JWT',
      send: () =>
        api().request(`${deployment.url}/api/orders`, { headers: { authorization: 'Bearer not-a-jwt-bearer-value' } }),
      status: 401,
      msg: 'request challenged',
      reason: /^bearer token /,
      path: '/api/orders',
    },
    {
      name: 'a forged X-ZUMO-AUTH',
      send: () => api().request(`${deployment.url}/api/orders`, { headers: { 'x-zumo-auth': 'forged.zumo.token' } }),
      status: 401,
      msg: 'request challenged',
      reason: /^authentication token /,
      path: '/api/orders',
    },
    {
      name: 'an open redirect at login',
      send: () => new Browser().request(`${deployment.url}/.auth/login/dev?post_login_redirect_uri=//evil.example`),
      status: 400,
      msg: 'login refused',
      reason: /^return URL refused/,
      path: '/.auth/login/dev',
    },
    {
      name: 'an open redirect at logout',
      send: () =>
        new Browser().request(`${deployment.url}/.auth/logout?post_logout_redirect_uri=https://evil.example/`),
      status: 302,
      msg: 'logout redirect refused',
      reason: /^return URL refused/,
      path: '/.auth/logout',
    },
    {
      name: 'a prompt sign-in does not take',
      send: () => new Browser().request(`${deployment.url}/.auth/login/dev?prompt=none`),
      status: 400,
      msg: 'login refused',
      reason: /^prompt refused$/,
      path: '/.auth/login/dev',
    },
    {
      name: 'an unknown provider',
      send: () => new Browser().request(`${deployment.url}/.auth/login/nobody`),
      status: 404,
      msg: 'request rejected',
      reason: /^unknown provider$/,
      path: '/.auth/login/nobody',
    },
    {
      name: 'an unknown /.auth endpoint',
      send: () => api().request(`${deployment.url}/.auth/nothing-here`),
      status: 404,
      msg: 'request rejected',
      reason: /^no such endpoint$/,
      path: '/.auth/nothing-here',
    },
    {
      name: 'a method /.auth/login does not take',
      send: () => api().request(`${deployment.url}/.auth/login/dev`, { method: 'PUT' }),
      status: 405,
      msg: 'request rejected',
      reason: /^method not allowed$/,
      path: '/.auth/login/dev',
    },
    {
      name: '/.auth/me without a session',
      send: () => api().request(`${deployment.url}/.auth/me`),
      status: 401,
      msg: 'request refused',
      reason: /^not signed in$/,
      path: '/.auth/me',
    },
    {
      name: '/.auth/refresh without a session',
      send: () => api().request(`${deployment.url}/.auth/refresh`),
      status: 401,
      msg: 'request refused',
      reason: /^not signed in$/,
      path: '/.auth/refresh',
    },
    {
      name: 'a callback nobody started',
      send: () =>
        new Browser().request(
          `${deployment.url}/.auth/login/dev/callback?code=callback-code-value&state=callback-state-value`,
        ),
      status: 400,
      msg: 'sign-in callback refused',
      reason: /no login transaction/,
      path: '/.auth/login/dev/callback',
    },
    {
      name: 'a callback link carrying a provider error of its own words',
      send: () =>
        new Browser().request(
          `${deployment.url}/.auth/login/dev/callback?error=${encodeURIComponent('Account locked. Call 555-0100')}`,
        ),
      status: 401,
      msg: 'sign-in callback refused',
      reason: /^provider error Account locked\. Call 555-0100 \(no state\)$/,
      path: '/.auth/login/dev/callback',
    },
    {
      name: 'a callback link whose provider error is too long or not a code',
      send: () =>
        new Browser().request(`${deployment.url}/.auth/login/dev/callback?error=${'e'.repeat(5000)}%0Aforged-log-line`),
      status: 401,
      msg: 'sign-in callback refused',
      reason: /^provider error provider_error \(no state\)$/,
      path: '/.auth/login/dev/callback',
    },
    {
      name: 'a callback POST that is not a form',
      send: () =>
        api().request(`${deployment.url}/.auth/login/dev/callback`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: 'code=posted-code-value',
        }),
      status: 415,
      msg: 'sign-in callback refused',
      reason: /not a form/,
      path: '/.auth/login/dev/callback',
    },
    {
      name: 'a callback POST over the body limit',
      send: () =>
        api().request(`${deployment.url}/.auth/login/dev/callback`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `code=${'c'.repeat(100_000)}`,
        }),
      status: 413,
      msg: 'sign-in callback refused',
      reason: /^callback: the body is larger than \d+ bytes$/,
      path: '/.auth/login/dev/callback',
    },
    {
      name: 'a token exchange that is not JSON',
      send: () =>
        api().request(`${deployment.url}/.auth/login/dev`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"access_token": "exchange-token-value"',
        }),
      status: 400,
      msg: 'token exchange refused',
      reason: /not valid JSON/,
      path: '/.auth/login/dev',
    },
    {
      name: 'a token exchange whose declared length is over the limit',
      send: () =>
        api().request(`${deployment.url}/.auth/login/dev`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(70 * 1024) },
          body: '{}'.padEnd(70 * 1024),
        }),
      status: 413,
      msg: 'token exchange refused',
      reason: /larger than/,
      path: '/.auth/login/dev',
    },
  ];

  for (const c of cases) {
    it(`${c.name}: ${c.status}, logged as "${c.msg}" with its reason and path`, async () => {
      let status = 0;
      const lines = await logs.during(async () => ({ status } = await c.send()));
      expect(status).to.equal(c.status);
      const line = lines.find((l) => l.msg === c.msg);
      expect(line, JSON.stringify(lines)).not.to.equal(undefined);
      expect(line!.level as number).to.be.at.least(30);
      expect(line!.reason).to.match(c.reason);
      expect(line!.path).to.equal(c.path);
    });
  }

  it("a browser's own icon requests are challenged as any other, but logged at debug, not info", async () => {
    for (const path of ['/favicon.ico', '/apple-touch-icon-precomposed.png']) {
      let status = 0;
      const lines = await logs.during(
        async () => ({ status } = await new Browser().request(`${deployment.url}${path}`)),
      );
      expect(status).to.equal(302);
      expect(
        lines.filter((l) => l.msg === 'request challenged'),
        path,
      ).to.deep.equal([]);
    }
    const debug = capturingLogger('debug');
    const other = await startDeployment({ logger: debug.logger });
    try {
      const lines = await debug.during(() => new Browser().request(`${other.url}/favicon.ico`));
      expect(lines.find((l) => l.msg === 'request challenged')).to.include({ level: 20, path: '/favicon.ico' });
      // Only the icon itself: a path that merely contains its name is news.
      const page = await debug.during(() => new Browser().request(`${other.url}/files/favicon.ico.html`));
      expect(page.find((l) => l.msg === 'request challenged')).to.include({ level: 30 });
    } finally {
      await other.close();
    }
  });

  it('a CONNECT request: 400, logged as "request rejected" without its target', async () => {
    const lines = await logs.during(async () => {
      const response = await raw(
        deployment.url,
        'CONNECT secret-target.example:443 HTTP/1.1\r\nHost: secret-target.example:443\r\n\r\n',
      );
      expect(response).to.match(/^HTTP\/1\.1 400 /);
    });
    expect(lines.find((l) => l.msg === 'request rejected')).to.include({
      reason: 'CONNECT not supported',
      method: 'CONNECT',
    });
    expect(JSON.stringify(lines)).not.to.contain('secret-target');
  });

  it('the app down: the 502 is logged with the path', async () => {
    const other = await startDeployment({ logger: logs.logger });
    try {
      await other.closeUpstream();
      let status = 0;
      const lines = await logs.during(
        async () => ({ status } = await new Browser().request(`${other.url}/public/report?x=1`)),
      );
      expect(status).to.equal(502);
      expect(lines.find((l) => l.msg === 'upstream request failed')).to.include({ path: '/public/report' });
    } finally {
      await other.close();
    }
  });

  it('no cookie, token, code, query or client secret ever reaches the log', async () => {
    const browser = new Browser();
    const { hops } = await signIn(browser, deployment);
    const callback = new URL(hops.find((h) => h.url.includes('/.auth/login/dev/callback'))!.url);
    const [me] = JSON.parse((await browser.request(`${deployment.url}/.auth/me`)).body) as Array<{
      access_token: string;
      id_token: string;
      refresh_token: string;
    }>;
    expect((await browser.request(`${deployment.url}/.auth/refresh`)).status).to.equal(200);
    const session = browser.cookie(deployment.url, 'PlatformAuthSession')!.value;
    await browser.follow(`${deployment.url}/.auth/logout`);
    // The copied cookie, replayed after logout: refused, and logged without the cookie.
    expect(
      (await api().request(`${deployment.url}/protected`, { headers: { cookie: `PlatformAuthSession=${session}` } }))
        .status,
    ).to.equal(401);
    const secrets = {
      session,
      code: callback.searchParams.get('code')!,
      state: callback.searchParams.get('state')!,
      accessToken: me!.access_token,
      idToken: me!.id_token,
      refreshToken: me!.refresh_token,
      clientSecret: deployment.clientSecret,
      // From the refusals above.
      forgedCookie: 'forged-cookie-value',
      bearer: 'not-a-jwt-bearer-value',
      zumo: 'forged.zumo.token',
      callbackCode: 'callback-code-value',
      callbackState: 'callback-state-value',
      postedCode: 'posted-code-value',
      exchanged: 'exchange-token-value',
      query: 'secret-query',
    };
    const raw = logs.raw();
    expect(
      logs.lines().some((l) => l.msg === 'signed in'),
      'the sign-in itself was logged',
    ).to.equal(true);
    for (const [name, value] of Object.entries(secrets)) {
      expect(value, name).to.be.a('string').with.length.above(8);
      expect(raw.includes(value), `${name} appears in the log`).to.equal(false);
    }
  });
});
