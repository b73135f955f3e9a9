// A person meets the rules in real Chromium, through the sidecar and through
// nginx (examples/nginx, as shipped): the refusal page names the account, and
// its "sign in with another account" link leads to the provider's account
// choice and back to the page, now allowed.
import { existsSync } from 'node:fs';

import { expect } from 'chai';
import { chromium, type Browser as Chromium, type Page } from 'playwright-core';

import { DEMO_USERS } from '../../src/dev/identity-provider.js';
import { startBehind, webServerMissing } from '../forward-auth/behind-web-server.js';
import { defaultDocument } from '../support/sign-in.js';
import { startRulesDeployment } from '../support/rules-deployment.js';

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

/** Admin pages for the admin role; the rest for verified addresses at example.com (both demo users). */
const RULES = {
  paths: [{ path: '/admin/*', allow: [{ roles: ['admin'] }] }],
  default: { allow: [{ emailDomains: ['example.com'] }] },
};

async function signInOnProviderPage(page: Page, login: string, password: string, back: string): Promise<void> {
  await page.fill('input[name=username]', login);
  await page.fill('input[name=password]', password);
  await Promise.all([page.waitForURL(back), page.click('button[type=submit]:has-text("Sign in")')]);
}

/** Signed in as `reader`, refused at the admin page; then in as `demo` through the page's link. */
async function refusedThenAnotherAccount(page: Page, url: string, issuer: string): Promise<void> {
  const admin = `${url}/admin/settings?tab=1`;
  await page.goto(admin);
  expect(page.url().startsWith(issuer), page.url()).to.equal(true);
  const refused = page.waitForResponse((r) => r.url() === admin);
  await signInOnProviderPage(page, 'reader', 'reader', admin);
  expect((await refused).status()).to.equal(403);
  expect(await page.textContent('h1')).to.equal('Not allowed');
  expect(await page.textContent('p')).to.equal('You are signed in as Read Only (dev), who may not open this page.');
  // Other pages stay open to the same session.
  const home = await page.request.get(`${url}/docs`);
  expect(home.status()).to.equal(200);

  await Promise.all([
    page.waitForURL((u) => u.href.startsWith(issuer)),
    page.click('text=Sign in with another account'),
  ]);
  await signInOnProviderPage(page, 'demo', 'demo', admin);
  const body = JSON.parse((await page.textContent('body'))!) as { url: string; headers: Record<string, string> };
  expect(body.url).to.equal('/admin/settings?tab=1');
  expect(body.headers['x-platform-client-principal-name']).to.equal('Dev User');
}

describe('authorization in Chromium', function () {
  this.timeout(90_000);
  let browser: Chromium;

  before(async function () {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (bash .ci/run does)`);
    browser = await chromium.launch(LAUNCH);
  });
  after(() => browser?.close());

  it('through the sidecar: refused with the account named, then in with another account', async () => {
    const deployment = await startRulesDeployment({ users: { ...DEMO_USERS }, authorization: RULES });
    try {
      const page = await (await browser.newContext()).newPage();
      await refusedThenAnotherAccount(page, deployment.url, deployment.idp.issuer);
    } finally {
      await deployment.close();
    }
  });

  it('through nginx (examples/nginx/gatehouse.conf): the same page, the same way in', async () => {
    const missing = webServerMissing('nginx');
    if (missing !== undefined) throw new Error(missing);
    const deployment = await startBehind('nginx', {
      document: (issuer) => ({ ...defaultDocument(issuer), gatehouse: { authorization: RULES } }),
    });
    try {
      const page = await (await browser.newContext()).newPage();
      await refusedThenAnotherAccount(page, deployment.url, deployment.idp.issuer);
      expect(
        deployment.seen.some(
          (r) => r.url.startsWith('/admin') && r.headers['x-platform-client-principal-id'] === 'reader',
        ),
      ).to.equal(false);
    } finally {
      await deployment.close();
    }
  });
});
