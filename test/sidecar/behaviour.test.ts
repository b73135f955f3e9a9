import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { capturingLogger } from '../support/logs.js';
import { CLIENT_ID, defaultDocument, signIn, startDeployment, type Deployment } from '../support/sign-in.js';

async function seen(browser: Browser, url: string): Promise<Record<string, string>> {
  const reply = await browser.request(url);
  expect(reply.status, reply.body.slice(0, 200)).to.equal(200);
  return (JSON.parse(reply.body) as { headers: Record<string, string> }).headers;
}

describe('token refresh', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  before(async () => {
    // Every access token is inside the refresh window from the start.
    deployment = await startDeployment({
      document: (issuer) => ({ ...defaultDocument(issuer), gatehouse: { refreshWindowSeconds: 7200 } }),
    });
  });
  after(() => deployment.close());

  it('a protected request near token expiry refreshes implicitly', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const before = deployment.idp.grants.get('refresh_token') ?? 0;
    const first = await seen(browser, `${deployment.url}/a`);
    const second = await seen(browser, `${deployment.url}/b`);
    expect(deployment.idp.grants.get('refresh_token')).to.equal(before + 2);
    expect(second['x-platform-token-dev-access-token']).not.to.equal(first['x-platform-token-dev-access-token']);
  });

  it('parallel /.auth/refresh calls make one provider refresh', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const before = deployment.idp.grants.get('refresh_token') ?? 0;
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => browser.request(`${deployment.url}/.auth/refresh`)),
    );
    expect(replies.map((r) => r.status)).to.deep.equal(Array(10).fill(200));
    expect(deployment.idp.grants.get('refresh_token')).to.equal(before + 1);
  });

  it('a refresh the provider refuses ends the session (ReauthRequired)', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const [entry] = JSON.parse((await browser.request(`${deployment.url}/.auth/me`)).body) as Array<{
      refresh_token: string;
    }>;
    // Revoke the refresh token at the provider (RFC 7009), as an administrator or risk policy would.
    const revoked = await fetch(`${deployment.idp.issuer}/token/revocation`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${deployment.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: entry!.refresh_token, token_type_hint: 'refresh_token' }),
    });
    expect(revoked.status).to.equal(200);
    const refused = await browser.request(`${deployment.url}/.auth/refresh`);
    expect(refused.status).to.equal(401);
    expect(refused.setCookies.some((c) => /^PlatformAuthSession=;/.test(c))).to.equal(true);
    expect((await browser.request(`${deployment.url}/.auth/me`)).status).to.equal(401);
  });

  it('/.auth/refresh without a session is 401', async () => {
    const reply = await new Browser().request(`${deployment.url}/.auth/refresh`);
    expect(reply.status).to.equal(401);
    expect(JSON.parse(reply.body)).to.deep.equal({ error: 'Not signed in.' });
  });
});

describe('configurable behaviour', function () {
  this.timeout(30_000);

  it("another platform's header prefix and cookie name", async () => {
    const deployment = await startDeployment({
      document: (issuer) => ({
        ...defaultDocument(issuer),
        gatehouse: { headerPrefix: 'X-MS-', sessionCookieName: 'AppServiceAuthSession' },
      }),
    });
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      expect(browser.cookie(deployment.url, 'AppServiceAuthSession')).not.to.equal(undefined);
      const headers = await seen(browser, `${deployment.url}/x`);
      expect(headers['x-ms-client-principal-id']).to.equal('demo');
      expect(headers['x-ms-client-principal-idp']).to.equal('dev');
      expect(headers).not.to.have.property('x-platform-client-principal-id');
    } finally {
      await deployment.close();
    }
  });

  // Browsers keep __Secure- and __Host- cookies only when set with Secure, and __Host- ones only on
  // Path=/ (the test browser enforces this as they do; Chromium's own check is in test/e2e).
  for (const name of ['__Host-PlatformAuthSession', '__Secure-PlatformAuthSession']) {
    it(`a prefixed session cookie name (${name.slice(0, name.indexOf('-') + 1)}) signs in and out, over plain http on loopback too`, async () => {
      const deployment = await startDeployment({
        document: (issuer) => ({ ...defaultDocument(issuer), gatehouse: { sessionCookieName: name } }),
      });
      try {
        const browser = new Browser();
        const { hops } = await signIn(browser, deployment);
        const transaction = hops
          .flatMap((h) => h.setCookies)
          .find((c) => c.includes('Login_') && !c.includes('Max-Age=0'))!;
        expect(transaction).to.match(/^__Secure-PlatformAuthSessionLogin_[\w-]+=/);
        expect(transaction).to.contain('; Secure').and.to.contain('Path=/.auth/login/dev');
        const session = hops.flatMap((h) => h.setCookies).find((c) => c.startsWith(`${name}=`))!;
        expect(session).to.contain('; Secure').and.to.contain('Path=/;');
        expect((await seen(browser, `${deployment.url}/x`))['x-platform-client-principal-id']).to.equal('demo');
        await browser.request(`${deployment.url}/.auth/logout`);
        expect(browser.cookie(deployment.url, name)).to.equal(undefined);
      } finally {
        await deployment.close();
      }
    });
  }

  it('a prefixed session cookie name over plain http from a host that is not this machine: the sign-in is refused at its start, saying why', async () => {
    const logs = capturingLogger();
    const deployment = await startDeployment({
      document: (issuer) => ({
        ...defaultDocument(issuer),
        gatehouse: { sessionCookieName: '__Host-PlatformAuthSession' },
        httpSettings: { forwardProxy: { convention: 'Standard' } },
      }),
      logger: logs.logger,
    });
    try {
      // The browser would drop both cookies: the sign-in could only fail at the callback, for no reason it could tell.
      const page = await new Browser().request(`${deployment.url}/.auth/login/dev`, {
        headers: { host: 'app.example', accept: 'text/html' },
      });
      expect(page.status).to.equal(500);
      expect(page.body).to.contain('Sign-in needs https');
      expect(page.setCookies).to.deep.equal([]);
      const api = await new Browser().request(`${deployment.url}/.auth/login/dev`, {
        headers: { host: 'app.example:8080', accept: 'application/json' },
      });
      expect(api.status).to.equal(500);
      expect(JSON.parse(api.body)).to.deep.equal({
        error: 'This site can sign you in over https only. Please open it with https://.',
      });
      const refusal = logs.lines().find((line) => line.msg === 'login refused');
      expect(refusal?.reason).to.match(
        /^the session cookie name __Host-PlatformAuthSession needs https, and this request came over http/,
      );
      // Over https (a TLS terminator in front, trusted), and from this machine over http, it starts.
      for (const headers of [
        { host: 'app.example', 'x-forwarded-proto': 'https' },
        { host: 'localhost:8080' },
        { host: 'app.localhost' },
        { host: '[::1]:8080' },
      ]) {
        const started = await new Browser().request(`${deployment.url}/.auth/login/dev`, { headers });
        expect(started.status, JSON.stringify(headers)).to.equal(302);
      }
    } finally {
      await deployment.close();
    }
  });

  for (const [action, status] of [
    ['Return401', 401],
    ['RejectWith401', 401],
    ['Return403', 403],
    ['RejectWith404', 404],
  ] as const) {
    it(`unauthenticatedClientAction ${action} → ${status}`, async () => {
      const deployment = await startDeployment({
        document: (issuer) => ({
          ...defaultDocument(issuer),
          globalValidation: { unauthenticatedClientAction: action },
        }),
      });
      try {
        const page = await new Browser().request(`${deployment.url}/x?y=1`, { headers: { accept: 'text/html' } });
        expect(page.status).to.equal(status);
        // A 401 page offers a way to sign in and come back (a link, never a redirect); 403 and 404 say nothing more.
        const links = [...page.body.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
        expect(links).to.deep.equal(
          status === 401 ? [`/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent('/x?y=1')}`] : [],
        );
        expect(page.headers.location).to.equal(undefined);
      } finally {
        await deployment.close();
      }
    });
  }

  it('AllowAnonymous forwards anonymous callers without identity, and identifies signed-in ones', async () => {
    const deployment = await startDeployment({
      document: (issuer) => ({
        ...defaultDocument(issuer),
        globalValidation: { unauthenticatedClientAction: 'AllowAnonymous' },
      }),
    });
    try {
      const anonymous = await seen(new Browser(), `${deployment.url}/x`);
      expect(anonymous).not.to.have.property('x-platform-client-principal-id');
      const browser = new Browser();
      await signIn(browser, deployment, '/.auth/login/dev');
      expect((await seen(browser, `${deployment.url}/x`))['x-platform-client-principal-id']).to.equal('demo');
    } finally {
      await deployment.close();
    }
  });

  it('requireHttps redirects GETs to https and refuses other methods', async () => {
    const deployment = await startDeployment({
      document: (issuer) => ({ ...defaultDocument(issuer), httpSettings: { requireHttps: true } }),
    });
    try {
      const get = await new Browser().request(`${deployment.url}/x?y=1`);
      expect(get.status).to.equal(302);
      expect(get.headers.location).to.equal(`https://${new URL(deployment.url).host}/x?y=1`);
      expect((await new Browser().request(`${deployment.url}/x`, { method: 'POST' })).status).to.equal(403);
    } finally {
      await deployment.close();
    }
  });

  it('forwardProxy Standard trusts X-Forwarded-Host/Proto for callback URLs and cookies', async () => {
    const deployment = await startDeployment({
      document: (issuer) => ({
        ...defaultDocument(issuer),
        httpSettings: { forwardProxy: { convention: 'Standard' } },
      }),
    });
    try {
      const reply = await new Browser().request(`${deployment.url}/.auth/login/dev`, {
        headers: { 'x-forwarded-host': 'app.example.com', 'x-forwarded-proto': 'https' },
      });
      expect(new URL(reply.headers.location!).searchParams.get('redirect_uri')).to.equal(
        'https://app.example.com/.auth/login/dev/callback',
      );
      expect(reply.setCookies[0]).to.match(/; Secure/);
      // A proxy that writes the port it listens on (nginx's $host:$server_port): the callback is still the registered URL.
      const withPort = await new Browser().request(`${deployment.url}/.auth/login/dev`, {
        headers: { 'x-forwarded-host': 'app.example.com:443', 'x-forwarded-proto': 'https' },
      });
      expect(new URL(withPort.headers.location!).searchParams.get('redirect_uri')).to.equal(
        'https://app.example.com/.auth/login/dev/callback',
      );
      // The proxy in front sets the other forwarding headers: they pass. Path overrides and other spellings of the headers gatehouse sets still never do.
      const forwarded = await new Browser().request(`${deployment.url}/public/x`, {
        headers: {
          'x-forwarded-for': '203.0.113.7',
          'x-forwarded-port': '443',
          forwarded: 'for=203.0.113.7;proto=https',
          'x-real-ip': '203.0.113.7',
          'x-original-url': '/admin',
          x_forwarded_host: 'evil.example',
        },
      });
      const seen = JSON.parse(forwarded.body) as { headers: Record<string, string> };
      expect(seen.headers).to.include({
        'x-forwarded-for': '203.0.113.7, 127.0.0.1',
        'x-forwarded-port': '443',
        forwarded: 'for=203.0.113.7;proto=https',
        'x-real-ip': '203.0.113.7',
      });
      expect(seen.headers).not.to.have.any.keys('x-original-url', 'x_forwarded_host');
    } finally {
      await deployment.close();
    }
  });

  it("gatehouse's own routes answer only their methods: any other is a 405 with Allow, and changes nothing", async () => {
    const deployment = await startDeployment();
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      // Before, every method was taken: a DELETE or PUT to /.auth/logout signed out, a HEAD to /.auth/refresh refreshed.
      for (const [route, allow, refused] of [
        ['/.auth/me', 'GET, HEAD', ['POST', 'PUT', 'DELETE', 'OPTIONS']],
        ['/.auth/refresh', 'GET, POST', ['HEAD', 'PUT', 'DELETE']],
        ['/.auth/logout', 'GET, POST', ['HEAD', 'PUT', 'DELETE', 'PATCH']],
        ['/.auth/logout/complete', 'GET, HEAD', ['POST']],
        ['/.auth/logout/done', 'GET, HEAD', ['DELETE']],
        ['/.auth/login/done', 'GET, HEAD', ['PUT']],
        ['/.auth/version', 'GET, HEAD', ['POST']],
      ] as const) {
        for (const method of refused) {
          const answer = await browser.request(`${deployment.url}${route}`, {
            method,
            headers: { accept: 'application/json' },
          });
          expect(answer.status, `${method} ${route}`).to.equal(405);
          expect(answer.headers.allow, `${method} ${route}`).to.equal(allow);
        }
      }
      // Still signed in: none of the refused requests acted.
      expect((await browser.request(`${deployment.url}/.auth/me`)).status).to.equal(200);
      expect((await browser.request(`${deployment.url}/.auth/me`, { method: 'HEAD' })).status).to.equal(200);
    } finally {
      await deployment.close();
    }
  });

  it('/.auth/version and unknown /.auth routes', async () => {
    const deployment = await startDeployment();
    try {
      expect(JSON.parse((await new Browser().request(`${deployment.url}/.auth/version`)).body)).to.have.property(
        'version',
      );
      expect((await new Browser().request(`${deployment.url}/.auth/nope`)).status).to.equal(404);
      expect((await new Browser().request(`${deployment.url}/.auth/login/unknown`)).status).to.equal(404);
      const loginDelete = await new Browser().request(`${deployment.url}/.auth/login/dev`, { method: 'DELETE' });
      expect(loginDelete.status).to.equal(405);
      expect(loginDelete.headers.allow).to.equal('GET, HEAD, POST');
      const callbackPut = await new Browser().request(`${deployment.url}/.auth/login/dev/callback`, { method: 'PUT' });
      expect(callbackPut.status).to.equal(405);
      expect(callbackPut.headers.allow).to.equal('GET, POST');
      const hugePost = await new Browser().request(`${deployment.url}/.auth/login/dev/callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `code=${'x'.repeat(200_000)}`,
      });
      expect(hugePost.status).to.equal(413);
    } finally {
      await deployment.close();
    }
  });
});

describe('response_mode=form_post', function () {
  this.timeout(30_000);

  it('the provider POSTs the code to the callback, and sign-in completes; a redirect_uri among the login parameters cannot move the callback', async () => {
    const deployment = await startDeployment({
      document: (issuer) => {
        const document = defaultDocument(issuer) as {
          identityProviders: { customOpenIdConnectProviders: { dev: { login: Record<string, unknown> } } };
        };
        document.identityProviders.customOpenIdConnectProviders.dev.login.loginParameters = {
          response_mode: 'form_post',
          redirect_uri: 'https://elsewhere.example/cb',
        };
        return document as unknown as Record<string, unknown>;
      },
    });
    try {
      const browser = new Browser();
      const hops = await browser.follow(`${deployment.url}/protected`);
      const started = hops[1]!;
      expect(started.url.startsWith(`${deployment.url}/.auth/login/dev?`)).to.equal(true);
      const authorize = new URL(started.headers.location!);
      expect(authorize.searchParams.getAll('response_mode')).to.deep.equal(['form_post']);
      expect(authorize.searchParams.getAll('redirect_uri')).to.deep.equal([
        `${deployment.url}/.auth/login/dev/callback`,
      ]);
      // The provider answers with a page that POSTs the code to the callback, from its own site: a SameSite=Lax login
      // cookie would not come back with it. Over plain http SameSite is left to the browser (None needs Secure), as for Apple.
      expect(started.setCookies).to.have.length(1);
      expect(started.setCookies[0])
        .to.match(/^PlatformAuthSessionLogin_/)
        .and.not.match(/SameSite/i);
      const afterLogin = await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
      // The provider answers with a self-submitting form aimed at our callback.
      const formPage = afterLogin.at(-1)!;
      expect(formPage.body).to.contain('/.auth/login/dev/callback');
      expect(formPage.body).to.contain('Submitting Callback');
      const posted = await browser.submitForm(formPage, /\/\.auth\/login\/dev\/callback$/, {});
      expect(posted[0]!.status).to.equal(302);
      expect(posted[0]!.headers.location).to.equal('/protected');
      expect(
        (JSON.parse(posted.at(-1)!.body) as { headers: Record<string, string> }).headers[
          'x-platform-client-principal-id'
        ],
      ).to.equal('demo');
    } finally {
      await deployment.close();
    }
  });
});
