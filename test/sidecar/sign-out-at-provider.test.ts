// The lifecycle's "provider logout" (AuthenticatedSession → SignedOut): a real
// OpenID provider (oidc-provider) with gatehouse's back-channel logout URL
// registered. Signing out there, the provider posts a logout token to
// gatehouse, and the sessions it names end here too.
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { CLIENT_ID, sessionRecordFiles, signIn, startDeployment, type Deployment } from '../support/sign-in.js';
import { startStandIn } from '../stand-ins/http-kit.js';

/** Signs `browser` out at the provider itself (its end-session page, confirmed), as a person signing out of another app would. */
async function signOutAtProvider(browser: Browser, deployment: Deployment): Promise<void> {
  const page = (await browser.follow(`${deployment.idp.issuer}/session/end`)).at(-1)!;
  const done = (await browser.submitForm(page, /\/session\/end\/confirm$/, { logout: 'yes' })).at(-1)!;
  expect(done.body).to.contain('You are signed out.');
}

const status = async (browser: Browser, deployment: Deployment, pathname: string) =>
  (await browser.request(`${deployment.url}${pathname}`)).status;

describe('signing out at the provider (back-channel logout, real provider)', function () {
  this.timeout(30_000);

  describe('logout tokens that name the provider session (sid)', () => {
    let deployment: Deployment;
    let logs: CapturedLogs;
    before(async () => {
      logs = capturingLogger();
      deployment = await startDeployment({ backchannelLogout: {}, logger: logs.logger });
    });
    after(() => deployment.close());

    it('ends the session made in that provider session, at once, and not one made in another; a copied cookie is refused too', async () => {
      const here = new Browser();
      await signIn(here, deployment);
      const elsewhere = new Browser(); // another browser: another session at the provider
      await signIn(elsewhere, deployment);
      const copied = new Browser();
      copied.setCookie(
        deployment.url,
        `PlatformAuthSession=${here.cookie(deployment.url, 'PlatformAuthSession')!.value}; Path=/`,
      );
      expect(await status(here, deployment, '/.auth/me')).to.equal(200);
      const delivered = deployment.idp.backchannelLogouts.length;
      await signOutAtProvider(here, deployment);
      // gatehouse answered the provider's post with 200 (oidc-provider records anything else as an error).
      expect(deployment.idp.backchannelLogouts.slice(delivered)).to.deep.equal([{ clientId: CLIENT_ID }]);
      expect(await status(here, deployment, '/.auth/me')).to.equal(401);
      expect(await status(copied, deployment, '/.auth/me')).to.equal(401);
      const page = await here.request(`${deployment.url}/orders`);
      expect(page.status).to.equal(302);
      expect(page.headers.location).to.match(/\/\.auth\/login\/dev\?post_login_redirect_uri=%2Forders$/);
      expect(await status(elsewhere, deployment, '/.auth/me')).to.equal(200);
      expect(
        logs
          .lines()
          .some((l) => l.msg === 'signed out at the provider (back-channel logout)' && l.cachedSessionsEnded === 1),
      ).to.equal(true);
    });

    it('signing in again afterwards works', async () => {
      const browser = new Browser();
      await signIn(browser, deployment);
      await signOutAtProvider(browser, deployment);
      expect(await status(browser, deployment, '/.auth/me')).to.equal(401);
      const { final } = await signIn(browser, deployment);
      expect(final.status).to.equal(200);
      expect(await status(browser, deployment, '/.auth/me')).to.equal(200);
    });
  });

  it('an instance that has not cached the session finds the sign-out in the store, and removes the record', async () => {
    const logs = capturingLogger();
    // No session cache: every request reads the store, as another instance sharing it would.
    const deployment = await startDeployment({ backchannelLogout: {}, sessionCacheTtlMs: 0, logger: logs.logger });
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      expect(await status(browser, deployment, '/.auth/me')).to.equal(200);
      expect(await sessionRecordFiles(deployment)).to.have.length(1);
      await signOutAtProvider(browser, deployment);
      expect(logs.lines().find((l) => l.msg === 'signed out at the provider (back-channel logout)')).to.include({
        cachedSessionsEnded: 0,
      });
      expect(await sessionRecordFiles(deployment)).to.have.length(1);
      expect(await status(browser, deployment, '/.auth/me')).to.equal(401);
      expect(
        logs.lines().some((l) => l.msg === 'session ended: signed out at the provider' && l.provider === 'dev'),
      ).to.equal(true);
      expect(await sessionRecordFiles(deployment)).to.have.length(0);
    } finally {
      await deployment.close();
    }
  });

  it('logout tokens that name only the user (no sid) end every session of theirs made before; a replay of one, after the user signed in again, ends nothing', async () => {
    // Between the provider and gatehouse: passes each logout token on, and keeps it (`seen`) to replay one later.
    let gatehouse = '';
    const relay = await startStandIn(async (req, res, _url, body) => {
      const answer = await fetch(gatehouse, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? '' },
        body,
      });
      res.writeHead(answer.status).end(await answer.text());
    });
    const posted = () => relay.seen.map((request) => request.body);
    const deployment = await startDeployment({
      backchannelLogout: {
        sessionRequired: false,
        via: async (url) => {
          gatehouse = url;
          return `${relay.url}/logout`;
        },
      },
    });
    try {
      const first = new Browser();
      await signIn(first, deployment);
      const second = new Browser();
      await signIn(second, deployment);
      await signOutAtProvider(first, deployment);
      expect(posted()).to.have.length(1);
      expect(await status(first, deployment, '/.auth/me')).to.equal(401);
      expect(await status(second, deployment, '/.auth/me')).to.equal(401);
      // Issued-at times are whole seconds: a sign-in in the sign-out's own second counts as before it.
      await delay(1100);
      const again = new Browser();
      await signIn(again, deployment);
      expect(await status(again, deployment, '/.auth/me')).to.equal(200);
      const replayed = await fetch(gatehouse, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: posted()[0]!,
      });
      expect(replayed.status).to.equal(200);
      expect(await status(again, deployment, '/.auth/me')).to.equal(200);
    } finally {
      await deployment.close();
      await relay.close();
    }
  });
});
