// The shipped web-server configurations (examples/nginx, examples/caddy), each run by a real
// server from Debian on free ports, with `gatehouse serve --forward-auth` beside it and real
// Chromium in front: what a person and an API client meet, and what the app receives.
import { expect } from 'chai';
import { chromium, type Browser as Chromium, type Page } from 'playwright-core';

import { Browser } from '../support/browser.js';
import { startBehind, type BehindWebServer, type WebServer } from './behind-web-server.js';

const CHROMIUM = process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium';
const LAUNCH = {
  executablePath: CHROMIUM,
  args: [
    '--no-sandbox',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-gpu',
  ],
};

/** What the echoing app answered: the request as it received it. */
function echoed(text: string): { url: string; headers: Record<string, string> } {
  return JSON.parse(text) as { url: string; headers: Record<string, string> };
}

/** A spoofed identity value no answer of gatehouse ever holds. */
const FORGED = 'forged-admin';

/** Client-sent identity headers, in the spellings a server or framework may merge into the real one. */
const SPOOFS: ReadonlyArray<readonly [string, string]> = [
  ['X-PLATFORM-CLIENT-PRINCIPAL-ID', FORGED],
  ['x-platform-client-principal-id', FORGED],
  ['X_PLATFORM_CLIENT_PRINCIPAL_ID', FORGED],
  ['X-Platform-Client-Principal-Name', FORGED],
  [
    'X-PLATFORM-CLIENT-PRINCIPAL',
    Buffer.from(JSON.stringify({ auth_typ: 'dev', claims: [{ typ: 'sub', val: FORGED }] })).toString('base64'),
  ],
  ['X-MS-CLIENT-PRINCIPAL-ID', FORGED],
  ['X-Platform-Token-Dev-Access-Token', FORGED],
];

for (const which of ['nginx', 'caddy'] as const satisfies readonly WebServer[]) {
  describe(`forward authentication behind ${which} (examples/${which}, as shipped)`, function () {
    this.timeout(60_000);
    let deployment: BehindWebServer;
    let chromiumBrowser: Chromium;
    let page: Page;
    /** The session cookie Chromium got, as a header, to replay after the logout. */
    let copied: string;
    let idToken: string;

    before(async () => {
      deployment = await startBehind(which);
      chromiumBrowser = await chromium.launch(LAUNCH);
      page = await (await chromiumBrowser.newContext()).newPage();
    });
    after(async () => {
      await chromiumBrowser?.close();
      await deployment?.close();
    });

    it('an API caller without credentials gets 401 with a JSON error; nothing reaches the app', async () => {
      const answer = await new Browser().request(`${deployment.url}/api/orders`, {
        headers: { accept: 'application/json' },
      });
      expect(answer.status).to.equal(401);
      expect(JSON.parse(answer.body)).to.have.property('error');
      expect(deployment.seen).to.deep.equal([]);
    });

    it('a browser without a session is sent to sign in, with the URL it asked for as the return URL', async () => {
      const answer = await new Browser().request(`${deployment.url}/docs/page?x=1&y=2`);
      expect(answer.status).to.equal(302);
      expect(answer.headers.location).to.equal(
        `/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent('/docs/page?x=1&y=2')}`,
      );
      expect(deployment.seen).to.deep.equal([]);
    });

    it('signs in in Chromium through the web server; the app gets the identity from gatehouse', async () => {
      await page.goto(`${deployment.url}/docs/page?x=1&y=2`);
      expect(page.url().startsWith(deployment.idp.issuer), page.url()).to.equal(true);
      await page.fill('input[name=username]', 'demo');
      await page.fill('input[name=password]', 'demo');
      await Promise.all([
        page.waitForURL(`${deployment.url}/docs/page?x=1&y=2`),
        page.click('button[type=submit]:has-text("Sign in")'),
      ]);
      const { url, headers } = echoed((await page.textContent('body'))!);
      expect(url).to.equal('/docs/page?x=1&y=2');
      expect(headers).to.include({
        'x-platform-client-principal-id': 'demo',
        'x-platform-client-principal-name': 'Dev User',
        'x-platform-client-principal-idp': 'dev',
      });
      const principal = JSON.parse(Buffer.from(headers['x-platform-client-principal']!, 'base64').toString('utf8')) as {
        claims: Array<{ typ: string; val: string }>;
      };
      expect(principal.claims).to.deep.include({ typ: 'email', val: 'demo@example.com' });
      const session = (await page.context().cookies(deployment.url)).find((c) => c.name === 'PlatformAuthSession')!;
      expect(session).to.include({ httpOnly: true, sameSite: 'Lax' });
      copied = `PlatformAuthSession=${session.value}`;
    });

    it('/.auth/me answers on the app origin, through the web server', async () => {
      const response = await page.request.get(`${deployment.url}/.auth/me`);
      expect(response.status()).to.equal(200);
      const [entry] = (await response.json()) as Array<{ user_id: string; id_token: string }>;
      expect(entry!.user_id).to.equal('demo');
      idToken = entry!.id_token;
    });

    it('an excluded path reaches the app anonymously, without identity headers', async () => {
      const answer = await new Browser().request(`${deployment.url}/public/logo.png`);
      expect(answer.status).to.equal(200);
      const { url, headers } = echoed(answer.body);
      expect(url).to.equal('/public/logo.png');
      expect(Object.keys(headers).filter((name) => name.startsWith('x-platform-'))).to.deep.equal([]);
    });

    it("the provider's token as a bearer token reaches the app with its identity", async () => {
      const answer = await new Browser().request(`${deployment.url}/api/orders`, {
        headers: { authorization: `Bearer ${idToken}`, accept: 'application/json' },
      });
      expect(answer.status).to.equal(200);
      expect(echoed(answer.body).headers['x-platform-client-principal-id']).to.equal('demo');
    });

    it('a client-sent identity header never reaches the app, signed in or not, protected path or excluded', async () => {
      const before = deployment.seen.length;
      for (const [name, value] of SPOOFS) {
        for (const cookie of [copied, undefined]) {
          for (const path of ['/reports', '/public/x']) {
            const answer = await new Browser().request(`${deployment.url}${path}`, {
              headers: { [name]: value, ...(cookie ? { cookie } : {}) },
            });
            // Refused by gatehouse (it sees what the app would get), or dropped by the web server
            // before anyone saw it (then judged as if never sent: served, or sent to sign in).
            if (answer.status === 200)
              expect(JSON.stringify(echoed(answer.body).headers), `${name} on ${path}`).not.to.contain(FORGED);
            else
              expect(answer.status, `${name} on ${path}`).to.be.oneOf(
                cookie === undefined && path === '/reports' ? [302, 403] : [403],
              );
          }
        }
      }
      for (const request of deployment.seen.slice(before))
        expect(JSON.stringify(request.headers)).not.to.contain(FORGED);
      // The one an app would take for the user: nginx passes it to gatehouse, which refuses the
      // request; Caddy's configuration deletes it first, and the app gets the real one.
      const answer = await new Browser().request(`${deployment.url}/reports`, {
        headers: { 'X-PLATFORM-CLIENT-PRINCIPAL-ID': FORGED, cookie: copied },
      });
      if (which === 'nginx') expect(answer.status).to.equal(403);
      else expect(echoed(answer.body).headers['x-platform-client-principal-id']).to.equal('demo');
    });

    it('the verify endpoint cannot be asked from outside, through the web server', async () => {
      const answer = await new Browser().request(`${deployment.url}/.auth/verify`, {
        headers: { cookie: copied, 'x-forwarded-uri': '/reports', 'x-forwarded-method': 'GET' },
      });
      expect(answer.status).to.equal(404);
    });

    it('signs out in Chromium; the copied session cookie is refused after it and reaches the app no more', async () => {
      expect(
        (await new Browser().request(`${deployment.url}/reports`, { headers: { cookie: copied } })).status,
      ).to.equal(200);
      await page.goto(`${deployment.url}/.auth/logout`);
      await page.waitForURL((url) => url.href.startsWith(deployment.idp.issuer));
      await Promise.all([page.waitForURL(`${deployment.url}/.auth/logout/done`), page.click('button[name=logout]')]);
      expect(await page.textContent('h1')).to.equal('Signed out');
      const seen = deployment.seen.length;
      const replayed = await new Browser().request(`${deployment.url}/reports`, { headers: { cookie: copied } });
      expect(replayed.status).to.equal(302);
      expect(replayed.headers.location).to.equal('/.auth/login/dev?post_login_redirect_uri=%2Freports');
      const api = await new Browser().request(`${deployment.url}/api/orders`, {
        headers: { cookie: copied, accept: 'application/json' },
      });
      expect(api.status).to.equal(401);
      expect(deployment.seen.length).to.equal(seen);
      // And in Chromium: the app's page sends it to sign in again.
      await page.goto(`${deployment.url}/reports`);
      expect(page.url().startsWith(deployment.idp.issuer), page.url()).to.equal(true);
    });
  });
}
