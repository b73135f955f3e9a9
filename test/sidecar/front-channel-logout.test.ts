// OpenID Connect Front-Channel Logout 1.0: the provider's logout page frames
// /.auth/logout/frontchannel/<provider>?iss=…&sid=…, and the sign-ins made in that
// provider session end here. A real provider (oidc-provider) issues the sid in
// its ID tokens; the framed request is made as a third-party iframe makes it,
// without the user's gatehouse cookie.
import { readdir } from 'node:fs/promises';
import path from 'node:path';

import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { Browser } from '../support/browser.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';

describe('front-channel logout (real provider)', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let logs: CapturedLogs;
  before(async () => {
    logs = capturingLogger();
    deployment = await startDeployment({ backchannelLogout: {}, logger: logs.logger });
  });
  after(() => deployment.close());

  const status = async (browser: Browser, pathname: string) =>
    (await browser.request(`${deployment.url}${pathname}`)).status;
  /** The provider session id of `browser`'s sign-in, from its ID token. */
  const sidOf = async (browser: Browser) => {
    const [me] = JSON.parse((await browser.request(`${deployment.url}/.auth/me`)).body) as Array<{ id_token: string }>;
    const sid = decodeJwt(me!.id_token).sid;
    expect(sid).to.be.a('string');
    return sid as string;
  };
  /** How many provider sign-outs the token store holds (files under provider-sign-outs/). */
  const signOutFiles = async () =>
    (
      await readdir(path.join(deployment.storeDirectory, 'provider-sign-outs'), {
        recursive: true,
        withFileTypes: true,
      })
    ).filter((entry) => entry.isFile()).length;
  const frontChannel = (query: string, method = 'GET') =>
    new Browser().request(`${deployment.url}/.auth/logout/frontchannel/dev?${query}`, { method });

  it('ends the sign-ins of the named provider session, and only those; only the provider may frame the answer', async () => {
    const here = new Browser();
    await signIn(here, deployment);
    const elsewhere = new Browser();
    await signIn(elsewhere, deployment);
    const sid = await sidOf(here);
    expect(await sidOf(elsewhere)).to.not.equal(sid);
    const answer = await frontChannel(new URLSearchParams({ iss: deployment.idp.issuer, sid }).toString());
    expect(answer.status).to.equal(200);
    expect(await signOutFiles()).to.be.at.least(1);
    expect(answer.headers['content-type']).to.match(/^text\/html/);
    expect(answer.headers['cache-control']).to.equal('no-store');
    expect(answer.headers['content-security-policy']).to.contain(
      `frame-ancestors ${new URL(deployment.idp.issuer).origin}`,
    );
    expect(answer.headers['x-frame-options']).to.equal(undefined);
    expect(await status(here, '/.auth/me')).to.equal(401);
    expect(await status(elsewhere, '/.auth/me')).to.equal(200);
    const line = logs.lines().find((l) => l.msg === 'signed out at the provider (front-channel logout)');
    expect(line).to.include({ provider: 'dev', cachedSessionsEnded: 1 });
    expect(JSON.stringify(logs.lines())).to.not.contain(sid);
  });

  it('answers an unknown sid as any other (nothing to learn by probing), ending nothing and writing nothing: a flood of made-up sids cannot fill the store', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const before = await signOutFiles();
    for (let i = 0; i < 50; i++) {
      const answer = await frontChannel(
        new URLSearchParams({ iss: deployment.idp.issuer, sid: `made-up-${i}` }).toString(),
      );
      expect(answer.status).to.equal(200);
    }
    expect(await signOutFiles()).to.equal(before);
    expect(await status(browser, '/.auth/me')).to.equal(200);
  });

  it('refuses another issuer, a missing, empty, repeated or overlong iss or sid, an unknown provider, and any method but GET', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const sid = await sidOf(browser);
    const iss = deployment.idp.issuer;
    const refusals: Array<[string, number]> = [
      [new URLSearchParams({ iss: 'https://evil.example', sid }).toString(), 400],
      [new URLSearchParams({ iss: `${iss}/`, sid }).toString(), 400],
      [new URLSearchParams({ sid }).toString(), 400],
      [new URLSearchParams({ iss }).toString(), 400],
      [new URLSearchParams({ iss, sid: '' }).toString(), 400],
      [`${new URLSearchParams({ iss, sid })}&sid=other`, 400],
      [new URLSearchParams({ iss, sid: 'x'.repeat(513) }).toString(), 400],
    ];
    for (const [query, expected] of refusals) expect((await frontChannel(query)).status, query).to.equal(expected);
    expect(
      (
        await new Browser().request(
          `${deployment.url}/.auth/logout/frontchannel/nobody?${new URLSearchParams({ iss, sid })}`,
        )
      ).status,
    ).to.equal(404);
    for (const method of ['POST', 'HEAD'])
      expect((await frontChannel(new URLSearchParams({ iss, sid }).toString(), method)).status, method).to.equal(405);
    expect(await status(browser, '/.auth/me')).to.equal(200);
  });
});
