// Hostile input against a live deployment: every way in that must stay shut.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';

import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { capturingLogger } from '../support/logs.js';
import { raw, rawBody, rawConnection } from '../support/raw-http.js';
import {
  breakSessionRecords,
  breakTokenStore,
  defaultDocument,
  pendingLogins,
  sessionRecordFiles,
  signIn,
  startDeployment,
  type Deployment,
} from '../support/sign-in.js';

describe('sidecar attack surface', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let signedIn: Browser;
  let cookie: string;
  before(async () => {
    deployment = await startDeployment({ sessionCacheTtlMs: 0 });
    signedIn = new Browser();
    await signIn(signedIn, deployment);
    cookie = `PlatformAuthSession=${signedIn.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
  });
  after(() => deployment.close());

  describe('open redirects', () => {
    for (const target of [
      '//evil.example',
      '/\\evil.example',
      '/%5Cevil.example',
      '/%09/evil.example',
      '/.//evil.example',
      '/a/%2e%2e//evil.example',
      'https:evil.example',
      'http://127.0.0.1@evil.example',
      'javascript:alert(1)',
      'https://evil.example/',
      '/.auth/login/dev?post_login_redirect_uri=https://evil.example',
    ]) {
      it(`login refuses post_login_redirect_uri=${target}`, async () => {
        const reply = await new Browser().request(
          `${deployment.url}/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent(target)}`,
        );
        expect(reply.status).to.equal(400);
        expect(reply.headers.location).to.equal(undefined);
        // The page's one link signs in to the default landing page, without the refused address.
        expect([...reply.body.matchAll(/href="([^"]*)"/g)].map((m) => m[1])).to.deep.equal(['/.auth/login/dev']);
      });
      it(`logout does not follow post_logout_redirect_uri=${target}`, async () => {
        const reply = await new Browser().request(
          `${deployment.url}/.auth/logout?post_logout_redirect_uri=${encodeURIComponent(target)}`,
        );
        expect(reply.status).to.equal(302);
        expect(reply.headers.location).to.equal('/.auth/logout/done');
      });
    }
    it('a logout link with a return address that is not allowed still signs out, and goes to the default page', async () => {
      const browser = new Browser();
      await signIn(browser, deployment);
      const held = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
      const hops = await browser.follow(
        `${deployment.url}/.auth/logout?post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}`,
      );
      // Signed out at the provider too, whose confirmation then leads to the default page, not the refused one.
      expect(new URL(hops[0]!.headers.location!).origin).to.equal(deployment.idp.issuer);
      const confirmed = await browser.submitForm(hops.at(-1)!, /session\/end\/confirm/, { logout: 'yes' });
      expect(confirmed.at(-1)!.url).to.equal(`${deployment.url}/.auth/logout/done`);
      expect(
        confirmed.some(
          (hop) => hop.url.includes('evil.example') || (hop.headers.location ?? '').includes('evil.example'),
        ),
      ).to.equal(false);
      // The session is over on the server: the copied cookie is refused.
      expect(
        (await new Browser().request(`${deployment.url}/protected`, { headers: { cookie: held } })).status,
      ).to.equal(302);
    });
    it('the alias post_login_redirect_url is validated the same way', async () => {
      expect(
        (await new Browser().request(`${deployment.url}/.auth/login/dev?post_login_redirect_url=//evil.example`))
          .status,
      ).to.equal(400);
      const ok = await new Browser().request(`${deployment.url}/.auth/login/dev?post_login_redirect_url=%2Forders`);
      expect(ok.status).to.equal(302);
    });
  });

  describe('excluded-path bypasses stay protected', () => {
    for (const p of [
      '/public/../protected',
      '/public/%2e%2e/protected',
      '/public/..%2fprotected',
      '/public;/../protected',
      '//public/../protected',
      '/PUBLIC/x',
      '/public%2f..%2fprotected',
    ]) {
      it(p, async () => {
        const response = await raw(
          deployment.url,
          `GET ${p} HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\nAccept: text/html\r\nConnection: close\r\n\r\n`,
        );
        expect(response).to.match(/^HTTP\/1\.1 302 /);
        expect(response).to.match(/location: \/\.auth\/login\/dev/i);
      });
    }
    it('a query that looks excluded does not exclude', async () => {
      const reply = await new Browser().request(`${deployment.url}/protected?x=/public/a`);
      expect(reply.status).to.equal(302);
    });
  });

  describe('identity header spoofing (signed in)', () => {
    it('every alias and duplicate is removed; the real identity arrives', async () => {
      const response = await raw(
        deployment.url,
        `GET /whoami HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\nCookie: ${cookie}\r\nAccept: text/html\r\nConnection: close\r\n` +
          'X-PLATFORM-CLIENT-PRINCIPAL-ID: admin\r\nx-platform-client-principal-id: admin2\r\nX_PLATFORM_CLIENT_PRINCIPAL: forged\r\n' +
          'x.platform.client.principal.name: root\r\nX-Platform-Token-Dev-Access-Token: stolen\r\nX-PLATFORM-CLIENT-PRINCIPAL-IDP: evil\r\n\r\n',
      );
      const seen = JSON.parse(rawBody(response)) as { headers: Record<string, string> };
      expect(seen.headers['x-platform-client-principal-id']).to.equal('demo');
      expect(seen.headers['x-platform-client-principal-idp']).to.equal('dev');
      expect(seen.headers['x-platform-token-dev-access-token']).not.to.equal('stolen');
      expect(seen.headers).not.to.have.property('x_platform_client_principal');
      expect(seen.headers).not.to.have.property('x.platform.client.principal.name');
    });

    it('a hostile Connection header cannot remove what gatehouse injects', async () => {
      const reply = await signedIn.request(`${deployment.url}/whoami`, {
        headers: {
          connection:
            'keep-alive, X-PLATFORM-CLIENT-PRINCIPAL-ID, x-platform-client-principal, X-Forwarded-For, x-forwarded-host',
          'x-forwarded-for': '6.6.6.6',
        },
      });
      const seen = JSON.parse(reply.body) as { headers: Record<string, string> };
      expect(seen.headers['x-platform-client-principal-id']).to.equal('demo');
      expect(seen.headers['x-platform-client-principal']).to.be.a('string');
      expect(seen.headers['x-forwarded-for']).to.equal('127.0.0.1');
      expect(seen.headers['x-forwarded-host']).to.equal(new URL(deployment.url).host);
      expect(seen.headers.connection ?? '').not.to.match(/principal|forwarded/i);
    });

    it('client X-Forwarded-* headers are replaced, not trusted (no forward proxy configured)', async () => {
      const reply = await signedIn.request(`${deployment.url}/whoami`, {
        headers: { 'x-forwarded-for': '6.6.6.6', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
      });
      const seen = JSON.parse(reply.body) as { headers: Record<string, string> };
      expect(seen.headers['x-forwarded-for']).to.equal('127.0.0.1');
      expect(seen.headers['x-forwarded-host']).to.equal(new URL(deployment.url).host);
      expect(seen.headers['x-forwarded-proto']).to.equal('http');
      // And redirects are not built from them either.
      const login = await new Browser().request(`${deployment.url}/.auth/login/dev`, {
        headers: { 'x-forwarded-host': 'evil.example' },
      });
      expect(new URL(login.headers.location!).searchParams.get('redirect_uri')).to.equal(
        `${deployment.url}/.auth/login/dev/callback`,
      );
    });

    it('forwarding headers a client could spoof never reach the app: path overrides, spellings of X-Forwarded-*, and (no forward proxy) every other forwarding claim', async () => {
      const host = new URL(deployment.url).host;
      // An excluded path, so that a path override would be the bypass: the app routing to /admin, which gatehouse never judged.
      const response = await raw(
        deployment.url,
        `GET /public/page HTTP/1.1\r\nHost: ${host}\r\nAccept: text/html\r\nConnection: close\r\n` +
          'X-Original-URL: /admin\r\nX-Rewrite-URL: /admin\r\nx_original_url: /admin\r\n' +
          'X_Forwarded_Host: evil.example\r\nX.Forwarded.Proto: https\r\nX_FORWARDED_FOR: 6.6.6.6\r\n' +
          'X-Forwarded-Port: 443\r\nX-Forwarded-Prefix: /evil\r\nX-Forwarded-Ssl: on\r\nX-Forwarded-Scheme: https\r\nX-Forwarded-Server: evil\r\n' +
          'Forwarded: for=6.6.6.6;host=evil.example;proto=https\r\nX-Real-IP: 6.6.6.6\r\nx_real_ip: 6.6.6.6\r\n' +
          'X-Forwardedness: kept\r\nFrom: kept@example.com\r\nX-Request-Id: kept\r\n\r\n',
      );
      expect(response).to.match(/^HTTP\/1\.1 200 /);
      const seen = JSON.parse(rawBody(response)) as { url: string; headers: Record<string, string> };
      expect(seen.url).to.equal('/public/page');
      const forwarding = Object.keys(seen.headers)
        .filter((name) => /forward|real.ip|original|rewrite/i.test(name))
        .sort();
      expect(forwarding).to.deep.equal(['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwardedness']);
      expect(seen.headers).to.include({
        'x-forwarded-for': '127.0.0.1',
        'x-forwarded-host': host,
        'x-forwarded-proto': 'http',
        'x-forwardedness': 'kept',
        from: 'kept@example.com',
        'x-request-id': 'kept',
      });
    });

    it('an invalid Host header is refused', async () => {
      const response = await raw(
        deployment.url,
        'GET /protected HTTP/1.1\r\nHost: evil.example/path\r\nConnection: close\r\n\r\n',
      );
      expect(response).to.match(/^HTTP\/1\.1 400 /);
    });

    it('a request with two Host headers is refused (RFC 9112 §3.2), to an excluded path, a webhook or an upgrade alike, and reaches nothing', async () => {
      const host = new URL(deployment.url).host;
      const before = deployment.upstream.requests.length;
      for (const [second, head] of [
        [host, 'GET /public/report HTTP/1.1'],
        ['evil.example', 'GET /public/report HTTP/1.1'],
        ['evil.example', 'POST /api/forge/webhook HTTP/1.1'],
        [
          'evil.example',
          'GET /public/socket HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        ],
      ]) {
        const response = await raw(
          deployment.url,
          `${head}\r\nHost: ${host}\r\nhost: ${second}\r\nContent-Length: 0\r\n\r\n`,
        );
        expect(response, `${head} / ${second}`).to.match(/^HTTP\/1\.1 400 /);
        expect(rawBody(response)).to.contain('Bad request target.');
      }
      expect(deployment.upstream.requests.length - before).to.equal(0);
      // One Host header is as before.
      expect(
        await raw(deployment.url, `GET /public/report HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      ).to.match(/^HTTP\/1\.1 200 /);
    });

    it('an absolute-form request target (RFC 9112 §3.2.2) is routed by its origin form; another host than Host is refused', async () => {
      const host = new URL(deployment.url).host;
      const send = (target: string, headers = '') =>
        raw(
          deployment.url,
          `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n${headers}Connection: close\r\n\r\n`,
        );
      const before = deployment.upstream.requests.length;
      const excluded = await send(`http://${host}/public/report?page=2`);
      expect(excluded).to.match(/^HTTP\/1\.1 200 /);
      expect(deployment.upstream.requests.at(-1)!.url, 'the app sees the origin form').to.equal(
        '/public/report?page=2',
      );
      expect(rawBody(await send(`HTTP://${host.toUpperCase()}/.auth/version`))).to.match(/^\{"version":/);
      // Protected paths stay protected, and dot segments cannot reach them through an excluded prefix.
      expect(await send(`http://${host}/protected`)).to.match(/^HTTP\/1\.1 401 /);
      expect(await send(`http://${host}/public/../protected`)).to.match(/^HTTP\/1\.1 401 /);
      expect(await send(`http://${host}`)).to.match(/^HTTP\/1\.1 401 /);
      const signedInAbsolute = await send(`http://${host}/whoami`, `Cookie: ${cookie}\r\n`);
      expect(JSON.parse(rawBody(signedInAbsolute)).headers['x-platform-client-principal-id']).to.equal('demo');
      // A target naming another host than Host: neither is believed.
      expect(await send('http://evil.example/public/report')).to.match(/^HTTP\/1\.1 400 /);
      expect(
        deployment.upstream.requests.length - before,
        'only the excluded page and the signed-in request reached the app',
      ).to.equal(2);
    });

    it('a CONNECT request (a tunnel, which only a forward proxy gives) is answered 400 and closed, signed in or not; nothing reaches the app', async () => {
      const host = new URL(deployment.url).host;
      const before = deployment.upstream.requests.length;
      for (const [target, headers] of [
        ['evil.example:443', ''],
        [host, `Cookie: ${cookie}\r\n`],
        ['/protected', ''],
      ]) {
        // No Connection: close: gatehouse closes the connection itself, or raw() would never resolve.
        const response = await raw(deployment.url, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${headers}\r\n`);
        expect(response, target).to.match(/^HTTP\/1\.1 400 /);
        expect(response).to.match(/\r\nConnection: close\r\n/);
        expect(JSON.parse(rawBody(response))).to.deep.equal({
          error: 'CONNECT is not supported: gatehouse is a reverse proxy, not a tunnel.',
        });
      }
      expect(deployment.upstream.requests.length - before).to.equal(0);
      expect(
        await raw(deployment.url, `GET /public/report HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      ).to.match(/^HTTP\/1\.1 200 /);
    });
  });

  describe('cookies', () => {
    /** A protected page asked for with this session cookie value only. */
    const withSessionCookie = (value: string) =>
      new Browser().request(`${deployment.url}/protected`, { headers: { cookie: `PlatformAuthSession=${value}` } });
    it('a forged, tampered or truncated session cookie is challenged, and cleared', async () => {
      const real = cookie.split('=')[1]!;
      for (const value of [
        'forged',
        `${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`,
        real.slice(0, 43),
        `${'A'.repeat(43)}.${real.split('.')[1]}`,
      ]) {
        const reply = await withSessionCookie(value);
        expect(reply.status, value).to.equal(302);
        expect(
          reply.setCookies.some((c) => /^PlatformAuthSession=;.*Max-Age=0/.test(c)),
          `${value}: cleared`,
        ).to.equal(true);
      }
      // No cookie at all: nothing to clear.
      expect((await new Browser().request(`${deployment.url}/protected`)).setCookies).to.deep.equal([]);
    });

    it("another deployment's (another app's) cookie is challenged", async () => {
      const other = await startDeployment();
      try {
        const browser = new Browser();
        await signIn(browser, other);
        expect((await withSessionCookie(browser.cookie(other.url, 'PlatformAuthSession')!.value)).status).to.equal(302);
      } finally {
        await other.close();
      }
    });

    it('a tampered token-store file means no session', async () => {
      const browser = new Browser();
      await signIn(browser, deployment);
      for (const file of await sessionRecordFiles(deployment)) {
        const record = JSON.parse(await fs.readFile(file, 'utf8'));
        const data = Buffer.from(record.data, 'base64');
        data[5]! ^= 0xff;
        await fs.writeFile(file, JSON.stringify({ ...record, data: data.toString('base64') }));
      }
      expect((await browser.request(`${deployment.url}/protected`)).status).to.equal(302);
      expect((await browser.request(`${deployment.url}/.auth/me`)).status).to.equal(401);
      // Re-sign-in works again afterwards.
      signedIn = new Browser();
      await signIn(signedIn, deployment);
      cookie = `PlatformAuthSession=${signedIn.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    });
  });

  describe('the login transaction', () => {
    async function toCallback(browser: Browser): Promise<URL> {
      const hops = await browser.follow(`${deployment.url}/protected`);
      const loginPage = hops.at(-1)!;
      // Stop at the callback: submit the provider form and follow until the redirect to our callback.
      const form = /<form[^>]*action="([^"]+\/login)"/.exec(loginPage.body)![1]!;
      let response = await browser.request(new URL(form, loginPage.url).href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'username=demo&password=demo',
      });
      while (response.status >= 300 && response.status < 400) {
        const next = new URL(response.headers.location!, response.url);
        if (next.pathname.endsWith('/.auth/login/dev/callback')) return next;
        response = await browser.request(next.href);
      }
      throw new Error('never reached the callback');
    }

    it('a wrong state is refused', async () => {
      const browser = new Browser();
      const callback = await toCallback(browser);
      callback.searchParams.set('state', 'attacker-state');
      const reply = await browser.request(callback.href);
      expect(reply.status).to.equal(400);
      expect(reply.body).to.contain('not started here');
      expect(reply.setCookies.find((c) => c.startsWith('PlatformAuthSession='))).to.equal(undefined);
      // Missing state altogether: refused too, and the login under way is left alone.
      callback.searchParams.delete('state');
      const stateless = await browser.request(callback.href);
      expect(stateless.status).to.equal(400);
      expect(stateless.setCookies).to.deep.equal([]);
      expect(pendingLogins(browser, deployment.url)).to.have.length(1);
    });

    it("a transaction cookie moved to another login's name does not open", async () => {
      const browser = new Browser();
      const callback = await toCallback(browser);
      const [own] = pendingLogins(browser, deployment.url);
      // A second login's state, with the first login's sealed transaction under the second's cookie name.
      const other = new Browser();
      const otherCallback = await toCallback(other);
      const [otherName] = pendingLogins(other, deployment.url);
      const reply = await new Browser().request(otherCallback.href, {
        headers: { cookie: `${otherName!.name}=${own!.value}` },
      });
      expect(reply.status).to.equal(400);
      expect(reply.body).to.contain('sign-in state is invalid');
      expect(reply.setCookies.find((c) => c.startsWith('PlatformAuthSession='))).to.equal(undefined);
      // Both real logins still finish.
      expect((await browser.request(callback.href)).status).to.equal(302);
      expect((await other.request(otherCallback.href)).status).to.equal(302);
    });

    it('a callback replayed after use (nonce/code replay) is refused', async () => {
      const browser = new Browser();
      const callback = await toCallback(browser);
      const [tx] = pendingLogins(browser, deployment.url);
      expect((await browser.request(callback.href)).status).to.equal(302);
      // Without the transaction cookie (cleared on use):
      expect((await browser.request(callback.href)).status).to.equal(400);
      // With the old transaction cookie put back: the code is spent, the provider refuses.
      const replay = await new Browser().request(callback.href, { headers: { cookie: `${tx!.name}=${tx!.value}` } });
      expect(replay.status).to.equal(401);
      expect(replay.setCookies.find((c) => c.startsWith('PlatformAuthSession='))).to.equal(undefined);
    });

    it("another browser's code injected with the victim's state fails PKCE", async () => {
      const victim = new Browser();
      const victimCallback = await toCallback(victim);
      const attacker = new Browser();
      const attackerCallback = await toCallback(attacker);
      // The victim's own state and transaction (verifier), the attacker's code.
      victimCallback.searchParams.set('code', attackerCallback.searchParams.get('code')!);
      const reply = await victim.request(victimCallback.href);
      expect(reply.status).to.equal(401);
      expect(reply.setCookies.find((c) => c.startsWith('PlatformAuthSession='))).to.equal(undefined);
    });

    it('a forged transaction cookie is refused', async () => {
      const browser = new Browser();
      const callback = await toCallback(browser);
      const [tx] = pendingLogins(browser, deployment.url);
      const reply = await new Browser().request(callback.href, {
        headers: { cookie: `${tx!.name}=AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA` },
      });
      expect(reply.status).to.equal(400);
      expect(reply.body).to.contain('sign-in state is invalid');
    });

    it('a provider error ends in a clear page, not a loop', async () => {
      const browser = new Browser();
      const hops = await browser.follow(`${deployment.url}/protected`);
      const cancelled = await browser.submitForm(hops.at(-1)!, /\/abort$/, {});
      const last = cancelled.at(-1)!;
      expect(last.status).to.equal(401);
      expect(last.body).to.contain('access_denied');
      // A provider that drops the state from its error answer: the same page, not a 400 about state.
      const stateless = await browser.request(`${deployment.url}/.auth/login/dev/callback?error=access_denied`);
      expect(stateless.status).to.equal(401);
      expect(stateless.body).to.contain('access_denied');
    });

    it("a crafted callback link cannot put its own words on gatehouse's error page", async () => {
      for (const accept of ['text/html', 'application/json']) {
        const reply = await new Browser().request(
          `${deployment.url}/.auth/login/dev/callback?error=${encodeURIComponent('Account locked. Call 555-0100')}`,
          { headers: { accept } },
        );
        expect(reply.status).to.equal(401);
        expect(reply.body).to.contain('did not sign you in');
        expect(reply.body).not.to.contain('555-0100');
      }
    });

    it('the session id is rotated at sign-in (no fixation)', async () => {
      const browser = new Browser();
      await signIn(browser, deployment);
      const first = browser.cookie(deployment.url, 'PlatformAuthSession')!.value;
      // Sign in again while holding the first session: a new id, and the old one is revoked.
      const hops = await browser.follow(`${deployment.url}/.auth/login/dev`);
      expect(hops.at(-1)!.url).to.match(/\/\.auth\/login\/done$/);
      const second = browser.cookie(deployment.url, 'PlatformAuthSession')!.value;
      expect(second).not.to.equal(first);
      expect(
        (
          await new Browser().request(`${deployment.url}/.auth/me`, {
            headers: { cookie: `PlatformAuthSession=${first}` },
          })
        ).status,
      ).to.equal(401);
    });
  });
});

describe('sidecar failure modes', function () {
  this.timeout(30_000);

  it('an expired login transaction restarts the sign-in cleanly', async () => {
    const deployment = await startDeployment({
      document: (issuer) => ({ ...defaultDocument(issuer), login: { nonce: { nonceExpirationInterval: '00:00:01' } } }),
    });
    try {
      const browser = new Browser();
      const hops = await browser.follow(`${deployment.url}/orders?page=2`);
      await new Promise((r) => setTimeout(r, 1200));
      const after = await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
      const callback = after.find((h) => h.url.includes('/.auth/login/dev/callback'))!;
      expect(callback.status).to.equal(302);
      expect(callback.headers.location).to.equal('/.auth/login/dev?post_login_redirect_uri=%2Forders%3Fpage%3D2');
      // The provider session exists now, so the restart completes without another form.
      expect(after.at(-1)!.status).to.equal(200);
      expect(JSON.parse(after.at(-1)!.body).url).to.equal('/orders?page=2');
    } finally {
      await deployment.close();
    }
  });

  it('provider down: a clear 502, and the sidecar keeps serving', async () => {
    const deployment = await startDeployment();
    try {
      await deployment.idp.close();
      const page = await new Browser().request(`${deployment.url}/.auth/login/dev?post_login_redirect_uri=%2Freports`);
      expect(page.status).to.equal(502);
      expect(page.headers['content-type']).to.match(/text\/html/);
      expect(page.body).to.contain('identity provider could not be reached');
      // A way to try again, to the same place; a link, not a refresh or a redirect.
      expect(page.body).to.contain('<a href="/.auth/login/dev?post_login_redirect_uri=%2Freports">Try again</a>');
      expect(page.headers.location).to.equal(undefined);
      const api = new Browser();
      api.accept = 'application/json';
      const json = await api.request(`${deployment.url}/.auth/login/dev`);
      expect(JSON.parse(json.body)).to.have.property('error');
      expect((await new Browser().request(`${deployment.url}/public/ok`)).status).to.equal(200);
    } finally {
      await deployment.close();
    }
  });

  it('upstream down: 502 page for browsers, JSON for APIs; upstream slow: 504', async () => {
    let hang = false;
    const deployment = await startDeployment({
      upstreamTimeoutMs: 300,
      upstreamHandler: (req, res) => {
        if (hang) return; // never answers
        res.end('ok');
      },
    });
    try {
      hang = true;
      const slow = await new Browser().request(`${deployment.url}/public/slow`);
      expect(slow.status).to.equal(504);
      expect(slow.body).to.contain('did not answer in time');
      hang = false;
      expect((await new Browser().request(`${deployment.url}/public/fine`)).body).to.equal('ok');
    } finally {
      await deployment.close();
    }
    const down = await startDeployment();
    try {
      await down.closeUpstream();
      const page = await new Browser().request(`${down.url}/public/x`);
      expect(page.status).to.equal(502);
      expect(page.body).to.contain('not reachable');
    } finally {
      await down.close();
    }
    const refused = await startDeployment({ upstreamHandler: (_req, res) => res.destroy() });
    try {
      const page = await new Browser().request(`${refused.url}/public/x`);
      expect(page.status).to.equal(502);
      expect(page.headers['content-type']).to.match(/text\/html/);
      const api = new Browser();
      api.accept = 'application/json';
      const json = await api.request(`${refused.url}/public/x`);
      expect(json.status).to.equal(502);
      expect(JSON.parse(json.body)).to.deep.equal({ error: 'The application is not reachable right now.' });
      expect((await new Browser().request(`${refused.url}/.auth/version`)).status).to.equal(200);
    } finally {
      await refused.close();
    }
  });

  it('a token store that fails (not merely a missing record) is a 500, for upgrades too, never a 502 blaming the app; the sidecar keeps serving', async () => {
    const deployment = await startDeployment({ sessionCacheTtlMs: 0 });
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      await breakTokenStore(deployment);
      const forwardedBefore = deployment.upstream.requests.length;
      const page = await browser.request(`${deployment.url}/protected`);
      expect(page.status).to.equal(500);
      expect(page.headers['content-type']).to.match(/text\/html/);
      expect(page.body).to.contain('error on the server').and.not.to.contain('ENOTDIR');
      browser.accept = 'application/json';
      const json = await browser.request(`${deployment.url}/protected`);
      expect(json.status).to.equal(500);
      expect(JSON.parse(json.body)).to.deep.equal({
        error: 'Sign-in could not be checked because of an error on the server.',
      });
      const sessionCookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
      const upgrade = await raw(
        deployment.url,
        `GET /socket HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\nCookie: ${sessionCookie}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
      expect(upgrade).to.match(/^HTTP\/1\.1 500 /);
      expect(rawBody(upgrade)).to.contain('500 Internal Server Error');
      expect(deployment.upstream.requests.length, 'nothing reached the app').to.equal(forwardedBefore);
      expect((await new Browser().request(`${deployment.url}/public/ok`)).status).to.equal(200);
    } finally {
      await deployment.close();
    }
  });

  it('a session record that cannot be read (a directory in its place) counts as signed out: challenged, cookie cleared, the fault logged once; no 500', async () => {
    const logs = capturingLogger('info');
    const deployment = await startDeployment({ sessionCacheTtlMs: 0, logger: logs.logger });
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      await breakSessionRecords(deployment);
      const forwardedBefore = deployment.upstream.requests.length;
      const held = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
      for (let i = 0; i < 3; i++) {
        const page = await new Browser().request(`${deployment.url}/protected`, { headers: { cookie: held } });
        expect(page.status).to.equal(302);
        expect(page.headers.location).to.match(/^\/\.auth\/login\/dev/);
        expect(String(page.headers['set-cookie']), 'the cookie is cleared').to.match(
          /PlatformAuthSession=;[^,]*(Max-Age=0|Expires=Thu, 01 Jan 1970)/i,
        );
      }
      const api = await new Browser().request(`${deployment.url}/api/orders`, {
        headers: { accept: 'application/json', cookie: held },
      });
      expect(api.status).to.equal(401);
      expect(deployment.upstream.requests.length, 'nothing reached the app').to.equal(forwardedBefore);
      const faults = logs
        .lines()
        .filter((l) => l.msg === 'token store fault: a record cannot be read; its session is treated as signed out');
      expect(faults).to.have.length(1);
      expect(faults[0]).to.include({ code: 'EISDIR' });
    } finally {
      await deployment.close();
    }
  });

  describe('a keep-alive connection the app closes as gatehouse reuses it', () => {
    /** An app that serves the first request of each connection and drops the connection on the second (the crossing, made certain). */
    async function droppingApp(options: { hangOn?: string } = {}) {
      const served = new WeakSet<object>();
      const seen: string[] = [];
      const deployment = await startDeployment({
        upstreamTimeoutMs: 400,
        upstreamHandler: (req, res) => {
          seen.push(`${req.method} ${req.url}`);
          if (served.has(req.socket)) {
            if (req.url === options.hangOn) return; // never answers: a timeout, not a dropped connection
            req.socket.destroy();
            return;
          }
          served.add(req.socket);
          req.resume();
          req.on('end', () => res.end(`ok ${req.url}`));
        },
      });
      return { deployment, seen };
    }

    it("an app's announced idle timeout is honoured: the connection is closed by gatehouse first", async () => {
      const sockets: object[] = [];
      const deployment = await startDeployment({
        upstreamSetup: (server) => {
          server.keepAliveTimeout = 2_000; // announced as Keep-Alive: timeout=2
        },
        upstreamHandler: (req, res) => {
          sockets.push(req.socket);
          res.end('ok');
        },
      });
      try {
        await new Browser().request(`${deployment.url}/public/a`);
        await new Browser().request(`${deployment.url}/public/b`);
        // Past the hint less node's one-second margin, before the app's own close.
        await new Promise((resolve) => setTimeout(resolve, 1_300));
        expect((await new Browser().request(`${deployment.url}/public/c`)).status).to.equal(200);
        expect(sockets[1]).to.equal(sockets[0]);
        expect(sockets[2]).to.not.equal(sockets[1]);
      } finally {
        await deployment.close();
      }
    });

    it('a GET is sent once more on a new connection and answered', async () => {
      const { deployment, seen } = await droppingApp();
      try {
        expect((await new Browser().request(`${deployment.url}/public/first`)).body).to.equal('ok /public/first');
        const second = await new Browser().request(`${deployment.url}/public/second`);
        expect(second.status).to.equal(200);
        expect(second.body).to.equal('ok /public/second');
        expect(seen).to.deep.equal(['GET /public/first', 'GET /public/second', 'GET /public/second']);
      } finally {
        await deployment.close();
      }
    });

    it('a POST is never sent twice: 502', async () => {
      const { deployment, seen } = await droppingApp();
      try {
        await new Browser().request(`${deployment.url}/public/first`);
        const post = await new Browser().request(`${deployment.url}/public/order`, {
          method: 'POST',
          body: 'item=1',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        expect(post.status).to.equal(502);
        expect(seen).to.deep.equal(['GET /public/first', 'POST /public/order']);
      } finally {
        await deployment.close();
      }
    });

    it('a GET that carries a body is never sent twice either: 502', async () => {
      const { deployment, seen } = await droppingApp();
      try {
        await new Browser().request(`${deployment.url}/public/first`);
        const withBody = await new Browser().request(`${deployment.url}/public/search`, {
          body: '{"q":1}',
          headers: { 'content-type': 'application/json', 'content-length': '7' },
        });
        expect(withBody.status).to.equal(502);
        expect(seen).to.deep.equal(['GET /public/first', 'GET /public/search']);
      } finally {
        await deployment.close();
      }
    });

    it('a GET that times out on a reused connection is not sent again: 504', async () => {
      const { deployment, seen } = await droppingApp({ hangOn: '/public/slow' });
      try {
        await new Browser().request(`${deployment.url}/public/first`);
        expect((await new Browser().request(`${deployment.url}/public/slow`)).status).to.equal(504);
        expect(seen).to.deep.equal(['GET /public/first', 'GET /public/slow']);
      } finally {
        await deployment.close();
      }
    });

    it('a GET whose retry fails too gets the 502 page, once', async () => {
      const seen: string[] = [];
      const deployment = await startDeployment({
        upstreamHandler: (req, res) => {
          seen.push(req.url ?? '');
          // The first connection serves once; every later request is dropped, on any connection.
          if (seen.length > 1) {
            req.socket.destroy();
            return;
          }
          res.end('ok');
        },
      });
      try {
        await new Browser().request(`${deployment.url}/public/first`);
        const page = await new Browser().request(`${deployment.url}/public/second`);
        expect(page.status).to.equal(502);
        expect(page.body).to.contain('not reachable');
        expect(seen).to.deep.equal(['/public/first', '/public/second', '/public/second']);
      } finally {
        await deployment.close();
      }
    });
  });
});

describe('WebSocket upgrades', function () {
  this.timeout(30_000);

  it('are authenticated like any request, then proxied with identity headers', async () => {
    const deployment = await startDeployment({
      upstreamSetup: (server) =>
        server.on('upgrade', (req, socket) => {
          const accept = createHash('sha1')
            .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
            .digest('base64');
          socket.end(
            `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nX-Seen-Id: ${req.headers['x-platform-client-principal-id'] ?? '-'}\r\n\r\n`,
          );
        }),
    });
    try {
      const handshake = (cookieHeader: string) =>
        raw(
          deployment.url,
          `GET /socket HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-PLATFORM-CLIENT-PRINCIPAL-ID: spoofed\r\n${cookieHeader}\r\n`,
        );
      const anonymous = await handshake('');
      expect(anonymous).to.match(/^HTTP\/1\.1 401 /);
      const browser = new Browser();
      await signIn(browser, deployment);
      const accepted = await handshake(
        `Cookie: PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}\r\n`,
      );
      expect(accepted).to.match(/^HTTP\/1\.1 101 /);
      expect(accepted).to.match(/x-seen-id: demo/i);
    } finally {
      await deployment.close();
    }
  });

  it("a client that leaves before the app has answered its upgrade: the app's half is closed, and gatehouse keeps serving", async () => {
    let appSeesUpgrade!: () => void;
    const upgradeArrived = new Promise<void>((resolve) => (appSeesUpgrade = resolve));
    let appSideClosed!: () => void;
    const appConnectionClosed = new Promise<void>((resolve) => (appSideClosed = resolve));
    const deployment = await startDeployment({
      upstreamSetup: (server) =>
        server.on('upgrade', (_req, socket) => {
          // Never answers: the client gives up first. (node's server sockets are half-open: the
          // app sees gatehouse's end of the connection as 'end', and closes its own.)
          socket
            .on('error', () => {})
            .on('end', () => socket.destroy())
            .on('close', appSideClosed)
            .resume();
          appSeesUpgrade();
        }),
    });
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      const { socket, received } = rawConnection(deployment.url);
      socket.write(
        `GET /socket HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nCookie: PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}\r\n\r\n`,
      );
      await upgradeArrived;
      socket.resetAndDestroy(); // a reset, not a clean close: the error node leaves unhandled on an upgraded socket
      await received;
      await appConnectionClosed;
      const after = await fetch(`${deployment.url}/.auth/version`);
      expect(after.status).to.equal(200);
    } finally {
      await deployment.close();
    }
  });
});
