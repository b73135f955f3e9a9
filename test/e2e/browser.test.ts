// The whole product as a person meets it: real Chromium, `gatehouse dev`
// (development OpenID provider, demo app, sidecar), sign in, see the
// principal, sign out, and the back button does not bring access back.
import { existsSync } from 'node:fs';

import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';

import { startDev, type RunningDev } from '../../src/dev/dev.js';
import { createLogger } from '../../src/logging.js';
import { loadAddonCore } from '../../src/native/index.js';

// Debian's Chromium by default; GATEHOUSE_CHROMIUM names another Chromium or Chrome (CI runners on other systems).
const CHROMIUM = process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium';
// Root in a container needs --no-sandbox; the closed network needs no background traffic.
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

describe('end to end in Chromium', function () {
  this.timeout(60_000);
  let dev: RunningDev;
  let browser: Browser;
  let page: Page;

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (bash .ci/run does)`);
    dev = await startDev({
      host: '127.0.0.1',
      port: 0,
      core: loadAddonCore(),
      logger: createLogger('silent'),
      version: 'test',
    });
    browser = await chromium.launch(LAUNCH);
    page = await (await browser.newContext()).newPage();
  });
  after(async () => {
    await browser?.close();
    await dev?.close();
  });

  it('redirects to the provider, signs in, and shows the principal', async () => {
    await page.goto(`${dev.url}/`);
    expect(page.url().startsWith(dev.issuer)).to.equal(true);
    await page.fill('input[name=username]', 'demo');
    await page.fill('input[name=password]', 'demo');
    await Promise.all([page.waitForURL(`${dev.url}/`), page.click('button[type=submit]:has-text("Sign in")')]);
    expect(await page.textContent('#user')).to.equal('Dev User');
    const principal = JSON.parse((await page.textContent('#principal'))!) as {
      auth_typ: string;
      claims: Array<{ typ: string; val: string }>;
    };
    expect(principal.auth_typ).to.equal('dev');
    expect(principal.claims).to.deep.include({ typ: 'email', val: 'demo@example.com' });
    const cookies = await page.context().cookies(dev.url);
    const session = cookies.find((c) => c.name === 'PlatformAuthSession')!;
    expect(session.httpOnly).to.equal(true);
    expect(session.sameSite).to.equal('Lax');
  });

  it('/.auth/me answers for the signed-in browser', async () => {
    const response = await page.request.get(`${dev.url}/.auth/me`);
    expect(response.status()).to.equal(200);
    const [entry] = (await response.json()) as Array<{ user_id: string }>;
    expect(entry!.user_id).to.equal('demo');
  });

  it("switches account: the demo app's link asks for the provider's account picker, where another person signs in", async () => {
    await page.goto(`${dev.url}/`);
    // Without the prompt the provider's session would sign the same person in again at once; with it, its form.
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${dev.issuer}/interaction/`)),
      page.click('#switch-account'),
    ]);
    await page.fill('input[name=username]', 'reader');
    await page.fill('input[name=password]', 'reader');
    // The provider ends the first person's session with a page that submits itself, then finishes the sign-in.
    await Promise.all([page.waitForURL(`${dev.url}/`), page.click('button[type=submit]:has-text("Sign in")')]);
    expect(await page.textContent('#user')).to.equal('Read Only');
    const [entry] = (await (await page.request.get(`${dev.url}/.auth/me`)).json()) as Array<{ user_id: string }>;
    expect(entry!.user_id).to.equal('reader');
  });

  it('signs out; the back button does not restore access', async () => {
    await page.goto(`${dev.url}/`);
    await page.click('a[href="/.auth/logout"]');
    await page.waitForURL((url) => url.href.startsWith(dev.issuer));
    await Promise.all([page.waitForURL(`${dev.url}/.auth/logout/done`), page.click('button[name=logout]')]);
    expect(await page.textContent('h1')).to.equal('Signed out');
    await page.goBack(); // the provider's confirmation page
    await page.goBack(); // the demo app page
    await page.waitForLoadState();
    // The page is not shown from cache: gatehouse was asked, and sent the browser to sign in.
    expect(page.url().startsWith(`${dev.issuer}/interaction/`), page.url()).to.equal(true);
    expect(await page.locator('#user').count()).to.equal(0);
    const me = await page.request.get(`${dev.url}/.auth/me`);
    expect(me.status()).to.equal(401);
  });

  it("signing out on the provider's own page signs the demo app out too (back-channel logout)", async () => {
    await page.goto(`${dev.url}/`);
    await page.fill('input[name=username]', 'demo');
    await page.fill('input[name=password]', 'demo');
    await Promise.all([page.waitForURL(`${dev.url}/`), page.click('button[type=submit]:has-text("Sign in")')]);
    expect(await page.textContent('#user')).to.equal('Dev User');
    // As if the person signed out of another app that uses the same provider.
    await page.goto(`${dev.issuer}/session/end`);
    await page.click('button[name=logout]');
    await page.waitForSelector('text=You are signed out.');
    await page.goto(`${dev.url}/`);
    expect(page.url().startsWith(`${dev.issuer}/interaction/`), page.url()).to.equal(true);
    expect((await page.request.get(`${dev.url}/.auth/me`)).status()).to.equal(401);
  });
});

describe('preserveUrlFragmentsForLogins in Chromium', function () {
  this.timeout(60_000);

  it('the #fragment survives the round trip through the provider', async () => {
    const { startDeployment, defaultDocument } = await import('../support/sign-in.js');
    const deployment = await startDeployment({
      document: (issuer) => ({ ...defaultDocument(issuer), login: { preserveUrlFragmentsForLogins: true } }),
    });
    const browser = await chromium.launch(LAUNCH);
    try {
      const page = await browser.newPage();
      await page.goto(`${deployment.url}/docs/page?x=1#section-2`);
      await page.waitForURL((url) => url.href.startsWith(deployment.idp.issuer));
      await page.fill('input[name=username]', 'demo');
      await page.fill('input[name=password]', 'demo');
      await Promise.all([
        page.waitForURL(`${deployment.url}/docs/page?x=1#section-2`),
        page.click('button[type=submit]:has-text("Sign in")'),
      ]);
      expect(page.url()).to.equal(`${deployment.url}/docs/page?x=1#section-2`);
    } finally {
      await browser.close();
      await deployment.close();
    }
  });
});

describe('a __Host- session cookie name in Chromium', function () {
  this.timeout(60_000);

  it('signs in over http on loopback: the prefixed cookies are set so that Chromium keeps them', async () => {
    const { startDeployment, defaultDocument } = await import('../support/sign-in.js');
    const deployment = await startDeployment({
      document: (issuer) => ({
        ...defaultDocument(issuer),
        gatehouse: { sessionCookieName: '__Host-PlatformAuthSession' },
      }),
    });
    const browser = await chromium.launch(LAUNCH);
    try {
      const page = await browser.newPage();
      await page.goto(`${deployment.url}/protected`);
      await page.waitForURL((url) => url.href.startsWith(deployment.idp.issuer));
      await page.fill('input[name=username]', 'demo');
      await page.fill('input[name=password]', 'demo');
      await Promise.all([
        page.waitForURL(`${deployment.url}/protected`),
        page.click('button[type=submit]:has-text("Sign in")'),
      ]);
      const echoed = JSON.parse((await page.textContent('body'))!) as { headers: Record<string, string> };
      expect(echoed.headers['x-platform-client-principal-id']).to.equal('demo');
      const session = (await page.context().cookies(deployment.url)).find(
        (c) => c.name === '__Host-PlatformAuthSession',
      )!;
      expect(session).to.include({ secure: true, path: '/', httpOnly: true });
    } finally {
      await browser.close();
      await deployment.close();
    }
  });
});
