// Facebook sign-in through gatehouse against the Facebook stand-in (real
// HTTP, the Graph API protocol of the configured version).
import { createHmac } from 'node:crypto';

import { expect } from 'chai';
import fc from 'fast-check';

import { Browser } from '../../support/browser.js';
import { forwarded, principal } from '../../support/principal.js';
import { assertAnyProfileEndsClearly, assertEachRefused, mostly, oddJson } from '../../support/profile-property.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { FACEBOOK_USER, facebookDocument, startFacebook, type FacebookStandIn } from '../../stand-ins/facebook.js';

describe('facebook provider', () => {
  let facebook: FacebookStandIn;
  let deployment: GatewayDeployment;

  beforeEach(async () => {
    facebook = await startFacebook({ version: 'v21.0' });
    deployment = await startGatewayDeployment({
      prepare: async () => ({ document: facebookDocument(facebook), env: { FACEBOOK_SECRET: facebook.appSecret } }),
    });
  });
  afterEach(async () => {
    await deployment.close();
    await facebook.close();
  });

  it('signs in with the configured Graph version: profile fetched, -ID the Facebook id, -NAME the name', async () => {
    const hops = await new Browser().follow(`${deployment.url}/feed`);
    expect(hops.at(-1)!.status).to.equal(200);
    expect(new URL(hops[1]!.headers.location!).pathname).to.equal('/v21.0/dialog/oauth');
    const { headers } = forwarded(hops.at(-1)!.body);
    expect(headers['x-platform-client-principal-id']).to.equal(FACEBOOK_USER.id);
    expect(headers['x-platform-client-principal-name']).to.equal(FACEBOOK_USER.name);
    expect(headers['x-platform-client-principal-idp']).to.equal('facebook');
    expect(principal(headers).claims).to.deep.include({ typ: 'email', val: FACEBOOK_USER.email });
    expect(headers['x-platform-token-facebook-expires-on']).to.be.a('string');
    expect(headers).to.not.have.property('x-platform-token-facebook-refresh-token');
  });

  it('swaps the short-lived token for a long-lived one and proves the app secret on every Graph call', async () => {
    const hops = await new Browser().follow(`${deployment.url}/`);
    const { headers } = forwarded(hops.at(-1)!.body);
    const exchange = facebook.seen.find((r) => r.url.includes('grant_type=fb_exchange_token'));
    expect(exchange, 'long-lived token request').to.not.equal(undefined);
    const profileCall = new URL(facebook.seen.find((r) => r.url.startsWith('/v21.0/me?'))!.url, facebook.url);
    const token = profileCall.searchParams.get('access_token')!;
    expect(headers['x-platform-token-facebook-access-token']).to.equal(token);
    expect(profileCall.searchParams.get('appsecret_proof')).to.equal(
      createHmac('sha256', facebook.appSecret).update(token).digest('hex'),
    );
    // About 60 days, not the short-lived token's 90 minutes.
    const expiresOn = Date.parse(headers['x-platform-token-facebook-expires-on']!);
    expect(expiresOn - Date.now()).to.be.above(50 * 24 * 3_600_000);
    for (const call of facebook.seen) expect(call.url.startsWith('/v21.0/')).to.equal(true);
  });

  it('token exchange: a token of this app becomes a session; one of another app is refused', async () => {
    const exchange = (token: string) =>
      new Browser().request(`${deployment.url}/.auth/login/facebook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ access_token: token }),
      });
    const ok = await exchange(facebook.issueToken());
    expect(ok.status, ok.body).to.equal(200);
    expect(JSON.parse(ok.body).user).to.deep.equal({ userId: FACEBOOK_USER.id });
    expect(facebook.seen.some((r) => r.url.startsWith('/v21.0/debug_token?'))).to.equal(true);
    expect((await exchange(facebook.issueToken('999999999'))).status).to.equal(401);
    expect((await exchange('EAAB-made-up')).status).to.equal(401);
  });

  it('error=access_denied ends in a 401 page', async () => {
    facebook.nextAuthorization = 'deny';
    const hops = await new Browser().follow(`${deployment.url}/`);
    expect(hops.at(-1)!.status).to.equal(401);
    expect(hops.at(-1)!.body).to.contain('access_denied');
  });

  it('a Graph error on the code (400 OAuthException) is a 401 page, never a 500', async () => {
    const browser = new Browser();
    const start = await browser.request(`${deployment.url}/.auth/login/facebook`);
    const dialog = await browser.request(start.headers.location!);
    const callback = new URL(dialog.headers.location!);
    callback.searchParams.set('code', 'AQ-forged');
    const answer = await browser.request(callback.href);
    expect(answer.status).to.equal(401);
  });
});

describe('facebook provider: a profile of any shape (property test over HTTP)', function () {
  this.timeout(120_000);
  let facebook: FacebookStandIn;
  let deployment: GatewayDeployment;
  before(async () => {
    facebook = await startFacebook();
    deployment = await startGatewayDeployment({
      prepare: async () => ({ document: facebookDocument(facebook), env: { FACEBOOK_SECRET: facebook.appSecret } }),
    });
  });
  after(async () => {
    await deployment.close();
    await facebook.close();
  });

  it('an id that is not a string of digits ("", "1e21", " 42", -1, 1.5, an object) is no Graph answer: a 502 page, nobody signed in', async () => {
    const answers = ['', '1e21', ' 42', '0', 'fay', -1, 1.5, { id: '1' }].map((id) => ({ id, name: 'Fay Book' }));
    await assertEachRefused(deployment, answers, (answer) => (facebook.profileAnswer = answer));
  });

  it('a name of only blanks names nobody: -NAME is the email, else the id', async () => {
    for (const [profile, name] of [
      [{ id: FACEBOOK_USER.id, name: '   ', email: 'fay@example.com' }, 'fay@example.com'],
      [{ id: FACEBOOK_USER.id, name: ' ', email: '\t' }, FACEBOOK_USER.id],
    ] as const) {
      facebook.profileAnswer = profile;
      const hops = await new Browser().follow(`${deployment.url}/feed`);
      expect(hops.at(-1)!.status).to.equal(200);
      expect(forwarded(hops.at(-1)!.body).headers['x-platform-client-principal-name']).to.equal(name);
    }
  });

  it('a sign-in ends in a clear answer, never a 500; a session it makes serves pages with the numeric id and a name', async () => {
    const profile = fc.oneof(
      {
        arbitrary: fc.record({ id: mostly(FACEBOOK_USER.id), name: oddJson, email: oddJson }, { requiredKeys: ['id'] }),
        weight: 4,
      },
      { arbitrary: oddJson, weight: 1 },
    );
    const signedIn = await assertAnyProfileEndsClearly(
      deployment,
      profile,
      (answer) => (facebook.profileAnswer = answer),
      80,
    );
    expect(signedIn).to.be.greaterThan(10);
  });
});
