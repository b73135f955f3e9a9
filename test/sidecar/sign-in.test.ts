import { promises as fs } from 'node:fs';
import http from 'node:http';

import { expect } from 'chai';

import { MAX_RETURN_URL_LENGTH } from '../../src/core/return-url.js';
import { MAX_PENDING_LOGINS } from '../../src/core/routes/login-transaction.js';
import { Browser } from '../support/browser.js';
import { forwarded, principal } from '../support/principal.js';
import { defaultDocument, pendingLogins, signIn, startDeployment, type Deployment } from '../support/sign-in.js';
import { bodyOf, isTokenCall, passToProvider } from '../support/token-endpoint.js';

describe('server-directed sign-in against a real OpenID provider', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  before(async () => {
    deployment = await startDeployment();
  });
  after(() => deployment.close());

  it('challenges, signs in with state/nonce/PKCE, rotates the session and forwards identity headers', async () => {
    const browser = new Browser();
    const { hops, final } = await signIn(browser, deployment);
    // 1. The protected page redirects to the login route with the return path.
    expect(hops[0]!.status).to.equal(302);
    expect(hops[0]!.headers.location).to.equal('/.auth/login/dev?post_login_redirect_uri=%2Fprotected');
    // 2. The login route redirects to the provider with state, nonce and an S256 PKCE challenge.
    const authorize = new URL(hops[1]!.headers.location!);
    expect(authorize.origin).to.equal(deployment.idp.issuer);
    for (const p of ['state', 'nonce', 'code_challenge'])
      expect(authorize.searchParams.get(p), p).to.match(/^[A-Za-z0-9_-]{20,}$/);
    expect(authorize.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(authorize.searchParams.get('redirect_uri')).to.equal(`${deployment.url}/.auth/login/dev/callback`);
    // The transaction cookie is sealed, HttpOnly and scoped to the login path.
    const tx = hops[1]!.setCookies.find((c) => c.startsWith('PlatformAuthSessionLogin_'))!;
    expect(tx)
      .to.match(/HttpOnly/)
      .and.to.match(/Path=\/\.auth\/login\/dev/)
      .and.to.match(/SameSite=Lax/);
    expect(tx).not.to.contain(authorize.searchParams.get('state')!);
    // 3. Back at the callback: session cookie set, 302 to where the user was going.
    const callback = [...hops].reverse().find((h) => h.url.includes('/.auth/login/dev/callback'))!;
    expect(callback.status).to.equal(302);
    expect(callback.headers.location).to.equal('/protected');
    const session = callback.setCookies.find((c) => c.startsWith('PlatformAuthSession='))!;
    expect(session)
      .to.match(/HttpOnly/)
      .and.to.match(/SameSite=Lax/)
      .and.to.match(/Path=\//)
      .and.not.to.match(/Secure/);
    // 4. The app received identity headers.
    expect(final.status).to.equal(200);
    const seen = forwarded(final.body);
    expect(seen.url).to.equal('/protected');
    expect(seen.headers['x-platform-client-principal-id']).to.equal('demo');
    expect(seen.headers['x-platform-client-principal-name']).to.equal('Dev User');
    expect(seen.headers['x-platform-client-principal-idp']).to.equal('dev');
    const p = principal(seen.headers);
    expect(p.auth_typ).to.equal('dev');
    expect(p.name_typ).to.equal('name');
    expect(p.claims).to.deep.include({ typ: 'email', val: 'demo@example.com' });
    expect(p.claims).to.deep.include({ typ: 'roles', val: 'admin' });
    expect(p.claims).to.deep.include({ typ: 'roles', val: 'reader' });
    expect(p.claims.every((c) => typeof c.val === 'string')).to.equal(true);
    expect(seen.headers['x-platform-token-dev-access-token']).to.be.a('string').with.length.greaterThan(10);
    expect(seen.headers['x-platform-token-dev-id-token']).to.match(/^ey/);
    expect(seen.headers['x-platform-token-dev-refresh-token']).to.be.a('string');
    expect(seen.headers['x-platform-token-dev-expires-on']).to.match(/^\d{4}-\d{2}-\d{2}T/);
    expect(seen.headers['x-forwarded-for']).to.equal('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).to.equal('http');
    expect(seen.headers['x-forwarded-host']).to.equal(new URL(deployment.url).host);
  });

  it('a link too long to be a return URL still signs in: it comes back to its path, without the query', async () => {
    const browser = new Browser();
    // Before the fix the challenge handed the login route a return URL it refuses: a 400 instead of a sign-in.
    const { hops, final } = await signIn(browser, deployment, `/protected?q=${'a'.repeat(3000)}`);
    expect(hops[0]!.headers.location).to.equal('/.auth/login/dev?post_login_redirect_uri=%2Fprotected');
    expect(final.status).to.equal(200);
    expect(forwarded(final.body).url).to.equal('/protected');
  });
  it('the longest return URL accepted comes back whole: its login transaction cookie stays within what browsers keep', async () => {
    const browser = new Browser(); // drops a cookie over 4096 bytes, as browsers do
    const target = `/protected?q=${'é'.repeat(120)}&r=`;
    const encoded = `/protected?q=${'%C3%A9'.repeat(120)}&r=`;
    const longest = encoded + 'x'.repeat(MAX_RETURN_URL_LENGTH - encoded.length);
    const start = `/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent(target + 'x'.repeat(MAX_RETURN_URL_LENGTH - encoded.length))}`;
    const { final } = await signIn(browser, deployment, start);
    expect(final.status).to.equal(200);
    expect(forwarded(final.body).url).to.equal(longest);
    expect(longest.length).to.equal(MAX_RETURN_URL_LENGTH);
  });

  it('a return URL that percent-encoding would make too long is refused at the start, not lost with its cookie after the provider', async () => {
    // 300 characters as asked for, 2,701 once encoded: before the fix this started a sign-in whose
    // transaction cookie (over 4096 bytes) the browser dropped, and the callback failed.
    const response = await new Browser().request(
      `${deployment.url}/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent(`/${'中'.repeat(300)}`)}`,
      { headers: { accept: 'application/json' } },
    );
    expect(response.status).to.equal(400);
    expect(response.headers['set-cookie']).to.equal(undefined);
  });

  it('a sign-in started at /.auth/login/<provider> with no return address lands on /.auth/login/done', async () => {
    const browser = new Browser();
    const { hops, final } = await signIn(browser, deployment, '/.auth/login/dev');
    const callback = [...hops].reverse().find((h) => h.url.includes('/.auth/login/dev/callback'))!;
    expect(callback.headers.location).to.equal('/.auth/login/done');
    expect(final.url).to.equal(`${deployment.url}/.auth/login/done`);
    expect(final.status).to.equal(200);
    expect(final.body).to.contain('You are signed in.');
    // Served by gatehouse to anyone, never taken for a provider named "done"; a browser without a session is not told it is signed in.
    const anonymous = await new Browser().request(`${deployment.url}/.auth/login/done`, {
      headers: { accept: 'text/html' },
    });
    expect(anonymous.status).to.equal(200);
    expect(anonymous.body).to.contain('You are not signed in.');
    expect(anonymous.body).to.contain('href="/.auth/login/dev"');
    expect(anonymous.body).not.to.contain('You are signed in.');
  });

  it("a failed sign-in's page links to a new one, to where it was going; the link is never followed by itself", async () => {
    const links = (body: string) =>
      [...body.matchAll(/<a href="([^"]*)">([^<]*)<\/a>/g)].map((m) => ({
        href: m[1]!.replace(/&#38;/g, '&'),
        text: m[2]!,
      }));
    const browser = new Browser();
    // Cancelled at the provider: the sign-in had started for /orders?page=2.
    const providerPage = (await browser.follow(`${deployment.url}/orders?page=2`)).at(-1)!;
    const cancelled = (await browser.submitForm(providerPage, /\/abort$/, {})).at(-1)!;
    expect(cancelled.status).to.equal(401);
    expect(links(cancelled.body)).to.deep.equal([
      {
        href: `/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent('/orders?page=2')}`,
        text: 'Sign in again',
      },
    ]);
    // Followed, it signs in and arrives where the first attempt was going.
    const again = await browser.follow(new URL(links(cancelled.body)[0]!.href, deployment.url).href);
    const done = (await browser.submitForm(again.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' })).at(-1)!;
    expect(done.status).to.equal(200);
    expect(forwarded(done.body).url).to.equal('/orders?page=2');

    // A callback whose sign-in is unknown here: the link starts one with the default landing page. A return
    // address in the callback's own query is not taken (only the one sealed when a sign-in starts is).
    const unknown = await new Browser().request(
      `${deployment.url}/.auth/login/dev/callback?error=access_denied&state=forged&post_login_redirect_uri=${encodeURIComponent('https://evil.example/')}`,
      { headers: { accept: 'text/html' } },
    );
    expect(unknown.status).to.equal(400);
    expect(links(unknown.body)).to.deep.equal([{ href: '/.auth/login/dev', text: 'Sign in again' }]);
    // API callers get the error alone, and no page answer ever redirects by itself.
    const json = await new Browser().request(`${deployment.url}/.auth/login/dev/callback?error=access_denied`, {
      headers: { accept: 'application/json' },
    });
    expect(json.status).to.equal(401);
    expect(Object.keys(JSON.parse(json.body))).to.deep.equal(['error']);
    expect(unknown.headers.location).to.equal(undefined);
    expect(unknown.body).not.to.match(/<script|http-equiv/i);
  });

  it('sign-ins started side by side in one browser (two tabs) both finish, each where it was going', async () => {
    const browser = new Browser();
    const user = { username: 'demo', password: 'demo' };
    // Both tabs reach the provider's page before either signs in.
    const first = (await browser.follow(`${deployment.url}/orders`)).at(-1)!;
    const second = (await browser.follow(`${deployment.url}/invoices`)).at(-1)!;
    expect(first.url.startsWith(deployment.idp.issuer) && second.url.startsWith(deployment.idp.issuer)).to.equal(true);
    expect(pendingLogins(browser, deployment.url)).to.have.length(2);

    const firstDone = await browser.submitForm(first, /\/login$/, user);
    expect(firstDone.at(-1)!.status).to.equal(200);
    expect(forwarded(firstDone.at(-1)!.body).url).to.equal('/orders');
    const secondDone = await browser.submitForm(second, /\/login$/, user);
    expect(secondDone.at(-1)!.status).to.equal(200);
    expect(forwarded(secondDone.at(-1)!.body).url).to.equal('/invoices');
    // Each callback cleared its own transaction cookie, and only its own.
    expect(pendingLogins(browser, deployment.url)).to.deep.equal([]);
  });

  it(`at most ${MAX_PENDING_LOGINS} sign-ins wait at once per browser: one more displaces an unreadable one first, then the oldest`, async () => {
    const browser = new Browser();
    const user = { username: 'demo', password: 'demo' };
    const pages = [];
    for (let tab = 0; tab < MAX_PENDING_LOGINS - 1; tab++)
      pages.push((await browser.follow(`${deployment.url}/tab/${tab}`)).at(-1)!);
    browser.setCookie(deployment.url, 'PlatformAuthSessionLogin_garbage=not-sealed; Path=/.auth/login/dev');
    expect(pendingLogins(browser, deployment.url)).to.have.length(MAX_PENDING_LOGINS);
    // One more: the unreadable cookie goes, every real sign-in stays.
    pages.push((await browser.follow(`${deployment.url}/tab/${MAX_PENDING_LOGINS - 1}`)).at(-1)!);
    const names = pendingLogins(browser, deployment.url).map((c) => c.name);
    expect(names).to.have.length(MAX_PENDING_LOGINS).and.not.include('PlatformAuthSessionLogin_garbage');
    // And one more: now the oldest real one goes.
    pages.push((await browser.follow(`${deployment.url}/tab/${MAX_PENDING_LOGINS}`)).at(-1)!);
    expect(pendingLogins(browser, deployment.url)).to.have.length(MAX_PENDING_LOGINS);
    expect(pendingLogins(browser, deployment.url).map((c) => c.name)).not.to.include(names[0]);

    const oldest = await browser.submitForm(pages[0]!, /\/login$/, user);
    expect(oldest.at(-1)!.status).to.equal(400);
    expect(oldest.at(-1)!.body).to.contain('Please start again');
    for (let tab = 1; tab <= MAX_PENDING_LOGINS; tab++) {
      const done = await browser.submitForm(pages[tab]!, /\/login$/, user);
      expect(forwarded(done.at(-1)!.body).url).to.equal(`/tab/${tab}`);
    }
    expect(pendingLogins(browser, deployment.url)).to.deep.equal([]);
  });

  it('/.auth/me lists the session; refresh renews tokens; logout revokes server-side', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const me = await browser.request(`${deployment.url}/.auth/me`);
    expect(me.status).to.equal(200);
    expect(me.headers['cache-control']).to.equal('no-store');
    const [entry] = JSON.parse(me.body) as Array<Record<string, unknown>>;
    expect(entry).to.include({ provider_name: 'dev', user_id: 'demo' });
    expect(entry!.access_token).to.be.a('string');
    expect(entry!.id_token).to.match(/^ey/);
    expect(entry!.refresh_token).to.be.a('string');
    expect(entry!.user_claims).to.deep.include({ typ: 'preferred_username', val: 'demo' });

    const refreshed = await browser.request(`${deployment.url}/.auth/refresh`);
    expect(refreshed.status).to.equal(200);
    const after = JSON.parse((await browser.request(`${deployment.url}/.auth/me`)).body) as Array<
      Record<string, unknown>
    >;
    expect(after[0]!.access_token).not.to.equal(entry!.access_token);

    const copied = browser.cookie(deployment.url, 'PlatformAuthSession')!.value;
    const logout = await browser.follow(`${deployment.url}/.auth/logout`);
    // RP-initiated logout at the provider (it asks to confirm).
    expect(new URL(logout[0]!.headers.location!).origin).to.equal(deployment.idp.issuer);
    expect(logout[0]!.setCookies.some((c) => /^PlatformAuthSession=;.*Max-Age=0/.test(c))).to.equal(true);
    const confirmed = await browser.submitForm(logout.at(-1)!, /session\/end\/confirm/, { logout: 'yes' });
    expect(confirmed.at(-1)!.url).to.equal(`${deployment.url}/.auth/logout/done`);
    expect(confirmed.at(-1)!.body).to.contain('You have signed out.');

    // The copied cookie no longer works: the record is gone.
    const replay = await new Browser().request(`${deployment.url}/.auth/me`, {
      headers: { cookie: `PlatformAuthSession=${copied}` },
    });
    expect(replay.status).to.equal(401);
    const replayPage = await new Browser().request(`${deployment.url}/protected`, {
      headers: { cookie: `PlatformAuthSession=${copied}` },
    });
    expect(replayPage.status).to.equal(302);
  });

  it('unauthenticated API calls get 401 JSON instead of a redirect', async () => {
    const api = new Browser();
    api.accept = 'application/json';
    const reply = await api.request(`${deployment.url}/api/orders`);
    expect(reply.status).to.equal(401);
    expect(JSON.parse(reply.body)).to.deep.equal({ error: 'Authentication required.' });
    const xhr = await new Browser().request(`${deployment.url}/protected`, {
      headers: { 'x-requested-with': 'XMLHttpRequest' },
    });
    expect(xhr.status).to.equal(401);
  });

  it("a browser's form POST without a session gets a 401 page whose link signs in and comes back to the page", async () => {
    const browser = new Browser();
    const posted = await browser.request(`${deployment.url}/orders/edit?id=7`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'quantity=3',
    });
    expect(posted.status).to.equal(401);
    expect(posted.headers.location).to.equal(undefined);
    const hrefs = [...posted.body.matchAll(/<a href="([^"]*)">Sign in<\/a>/g)].map((m) => m[1]!);
    expect(hrefs).to.deep.equal([
      `/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent('/orders/edit?id=7')}`,
    ]);
    const providerPage = (await browser.follow(new URL(hrefs[0]!, deployment.url).href)).at(-1)!;
    const done = (await browser.submitForm(providerPage, /\/login$/, { username: 'demo', password: 'demo' })).at(-1)!;
    expect(done.status).to.equal(200);
    expect(forwarded(done.body).url).to.equal('/orders/edit?id=7');
    // Nothing of the POST was forwarded while signed out.
    expect(
      deployment.upstream.requests.some(
        (r) => r.url === '/orders/edit?id=7' && r.headers['content-type'] !== undefined,
      ),
    ).to.equal(false);
  });

  it('excluded paths pass anonymously, with spoofed identity headers stripped', async () => {
    const reply = await new Browser().request(`${deployment.url}/public/app.js`, {
      headers: { 'x-platform-client-principal-id': 'admin', X_PLATFORM_CLIENT_PRINCIPAL: 'forged' },
    });
    expect(reply.status).to.equal(200);
    const seen = JSON.parse(reply.body) as { headers: Record<string, string> };
    expect(seen.headers).not.to.have.property('x-platform-client-principal-id');
    expect(seen.headers).not.to.have.property('x_platform_client_principal');
  });
});

describe('a logout while a refresh is at the provider', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  /** Refresh requests to the provider's token endpoint held until the test lets them go (sign-ins pass). */
  let holdRefreshes = false;
  const held: Array<() => void> = [];

  before(async () => {
    deployment = await startDeployment({
      interceptProvider: (req, res) => {
        if (!holdRefreshes || !isTokenCall(req)) return false;
        void bodyOf(req).then((body) =>
          held.push(() => {
            passToProvider(deployment.idp.issuer, req, body)
              .then(async (real) =>
                res.writeHead(real.status, { 'content-type': 'application/json' }).end(await real.text()),
              )
              .catch(() => res.destroy());
          }),
        );
        return true;
      },
    });
  });
  after(() => deployment.close());

  it("the provider's answer, arriving after the logout, does not bring the session back: the copied cookie stays dead", async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const copied = browser.cookie(deployment.url, 'PlatformAuthSession')!.value;
    holdRefreshes = true;
    const refreshing = browser.request(`${deployment.url}/.auth/refresh`);
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // Signed out (the provider's own sign-out page is not needed for this), then the refresh's answer comes.
    const logout = new Browser().request(`${deployment.url}/.auth/logout`, {
      headers: { cookie: `PlatformAuthSession=${copied}` },
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    held.splice(0).forEach((release) => release());
    holdRefreshes = false;
    expect((await refreshing).status).to.equal(200);
    expect((await logout).status).to.equal(302);
    const replay = await new Browser().request(`${deployment.url}/.auth/me`, {
      headers: { cookie: `PlatformAuthSession=${copied}` },
    });
    expect(replay.status, replay.body).to.equal(401);
  });
});

describe('return URLs with their own query', function () {
  this.timeout(30_000);

  it('an app URL whose query has a redirect-like name (?next=) still signs in and comes back', async () => {
    const deployment = await startDeployment();
    try {
      const browser = new Browser();
      const { final } = await signIn(browser, deployment, '/search?next=2&returnUrl=%2Fx');
      expect(final.status).to.equal(200);
      expect((JSON.parse(final.body) as { url: string }).url).to.equal('/search?next=2&returnUrl=%2Fx');
    } finally {
      await deployment.close();
    }
  });
});

describe('a token store directory deleted while gatehouse runs', function () {
  this.timeout(30_000);

  it('signs in again at once: the store recreates its directory instead of failing every sign-in until a restart', async () => {
    const deployment = await startDeployment({ sessionCacheTtlMs: 0 });
    try {
      const before = new Browser();
      await signIn(before, deployment);
      await fs.rm(deployment.storeDirectory, { recursive: true });
      // The session stored before is gone with the directory: challenged, never let through.
      expect((await before.request(`${deployment.url}/protected`)).status).to.equal(302);
      const after = new Browser();
      const { final } = await signIn(after, deployment);
      expect(final.status).to.equal(200);
      expect(forwarded(final.body).headers['x-platform-client-principal-id']).to.equal('demo');
      expect(await fs.readdir(deployment.storeDirectory)).to.have.length(1);
    } finally {
      await deployment.close();
    }
  });
});

describe('client credential method of a custom OpenID provider', function () {
  this.timeout(30_000);

  const withMethod = (method: string | undefined) => (issuer: string) => {
    const document = defaultDocument(issuer) as {
      identityProviders: {
        customOpenIdConnectProviders: { dev: { registration: { clientCredential: Record<string, unknown> } } };
      };
    };
    if (method !== undefined)
      document.identityProviders.customOpenIdConnectProviders.dev.registration.clientCredential.method = method;
    return document;
  };

  // A provider that takes the secret in the body only, though its metadata lists Basic too (as some do): a Basic header is refused.
  const bodyOnly = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    if (req.method !== 'POST' || !(req.url ?? '').startsWith('/token') || req.headers.authorization === undefined)
      return false;
    res
      .writeHead(401, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'invalid_client', error_description: 'client_secret_post only' }));
    return true;
  };

  it('ClientSecretPost sends the secret in the token request body, to a provider that takes it only there', async () => {
    for (const [method, signedIn] of [
      ['ClientSecretPost', true],
      [undefined, false],
    ] as const) {
      const deployment = await startDeployment({ interceptProvider: bodyOnly, document: withMethod(method) });
      try {
        const browser = new Browser();
        const { final } = await signIn(browser, deployment);
        // Without the method, gatehouse sends a Basic header (the provider's metadata lists both): the sign-in fails.
        expect(final.status, String(method)).to.equal(signedIn ? 200 : 401);
        if (signedIn) expect(forwarded(final.body).headers['x-platform-client-principal-id']).to.equal('demo');
      } finally {
        await deployment.close();
      }
    }
  });
});
