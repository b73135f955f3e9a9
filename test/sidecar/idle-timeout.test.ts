// login.cookieExpiration.inactivityTimeout through the sidecar, in real time (its shortest, a
// minute): of two people signed in, the one who keeps using the app stays signed in, the one who
// left it for longer than the timeout is sent to sign in again. (The timeout's rules, with both
// stores and several instances, are tested with a simulated clock in test/core/session.)
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { defaultDocument, signIn, startDeployment, type Deployment } from '../support/sign-in.js';

describe('session idle timeout through the sidecar (real time)', function () {
  this.timeout(150_000);
  let deployment: Deployment;

  before(async () => {
    deployment = await startDeployment({
      document: (issuer) => ({
        ...defaultDocument(issuer),
        login: { cookieExpiration: { inactivityTimeout: '00:01:00' } },
      }),
    });
  });
  after(() => deployment.close());

  it('a session in use stays signed in; one unused for longer than the timeout is challenged and its cookie cleared', async () => {
    const away = new Browser();
    const busy = new Browser();
    expect((await signIn(away, deployment)).final.status).to.equal(200);
    expect((await signIn(busy, deployment)).final.status).to.equal(200);
    for (let i = 0; i < 6; i++) {
      await delay(12_000);
      const answer = await busy.request(`${deployment.url}/protected`);
      expect(answer.status, `the busy session after ${(i + 1) * 12} s`).to.equal(200);
    }
    const idle = await away.request(`${deployment.url}/protected`);
    expect(idle.status).to.equal(302);
    expect(idle.headers.location).to.match(/\/\.auth\/login\/dev\?post_login_redirect_uri=%2Fprotected$/);
    expect(String(idle.headers['set-cookie'])).to.match(/PlatformAuthSession=;/);
    // Gone for good: /.auth/me says so too.
    expect((await away.request(`${deployment.url}/.auth/me`)).status).to.equal(401);
    expect((await busy.request(`${deployment.url}/.auth/me`)).status).to.equal(200);
  });
});
