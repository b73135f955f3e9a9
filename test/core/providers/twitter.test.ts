// Twitter sign-in (OAuth 1.0a) through gatehouse against the Twitter
// stand-in, which checks every signature with oauth-1.0a.
import { expect } from 'chai';
import fc from 'fast-check';

import { oauthSigner } from '../../../src/core/providers/twitter.js';
import { Browser } from '../../support/browser.js';
import { forwarded, principal } from '../../support/principal.js';
import { assertAnyProfileEndsClearly, assertEachRefused, mostly, oddJson } from '../../support/profile-property.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { startTwitter, twitterDocument, TWITTER_USER, type TwitterStandIn } from '../../stand-ins/twitter.js';

describe('twitter provider (OAuth 1.0a)', () => {
  it("the signer reproduces Twitter's published signature example", () => {
    // developer.twitter.com "Creating a signature": the POST to statuses/update.json.
    const signer = oauthSigner('xvz1evFS4wEEPTGEFPHBog', 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw');
    const request = {
      url: 'https://api.twitter.com/1/statuses/update.json?include_entities=true',
      method: 'POST',
      data: { status: 'Hello Ladies + Gentlemen, a signed OAuth request!' },
    };
    const oauthData = {
      oauth_consumer_key: 'xvz1evFS4wEEPTGEFPHBog',
      oauth_nonce: 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg',
      oauth_signature_method: 'HMAC-SHA1',
      oauth_timestamp: 1318622958,
      oauth_token: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb',
      oauth_version: '1.0',
    };
    expect(signer.getBaseString(request, oauthData)).to.equal(
      'POST&https%3A%2F%2Fapi.twitter.com%2F1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521',
    );
    expect(signer.getSignature(request, 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE', oauthData)).to.equal(
      'tnnArxj06cWHq44gCs1OSKk/jLY=',
    );
  });

  describe('through gatehouse', () => {
    let twitter: TwitterStandIn;
    let deployment: GatewayDeployment;

    beforeEach(async () => {
      twitter = await startTwitter();
      deployment = await startGatewayDeployment({
        prepare: async () => ({ document: twitterDocument(twitter), env: { TWITTER_SECRET: twitter.consumerSecret } }),
      });
    });
    afterEach(async () => {
      await deployment.close();
      await twitter.close();
    });

    it('request token → authorize → access token: the app gets the user and both token headers', async () => {
      const hops = await new Browser().follow(`${deployment.url}/timeline`);
      expect(hops.map((h) => h.status)).to.deep.equal([302, 302, 302, 302, 200]);
      const { headers } = forwarded(hops.at(-1)!.body);
      expect(headers['x-platform-client-principal-id']).to.equal(TWITTER_USER.id_str);
      expect(headers['x-platform-client-principal-name']).to.equal('twitterapi');
      expect(headers['x-platform-client-principal-idp']).to.equal('twitter');
      expect(headers['x-platform-token-twitter-access-token']).to.match(/^783214-/);
      expect(headers['x-platform-token-twitter-access-token-secret']).to.be.a('string').with.length.above(10);
      expect(principal(headers).claims).to.deep.include({ typ: 'email', val: TWITTER_USER.email });
      // Every signed call was accepted by the stand-in's signature check.
      expect(twitter.seen.map((r) => r.url.split('?')[0])).to.deep.equal([
        '/oauth/request_token',
        '/oauth/authenticate',
        '/oauth/access_token',
        '/1.1/account/verify_credentials.json',
      ]);
    });

    it('/.auth/login/x is sent on to /.auth/login/twitter with its query; its callback is not', async () => {
      for (const path of ['/.auth/login/x', '/.auth/login/X']) {
        const response = await new Browser().request(`${deployment.url}${path}?post_login_redirect_uri=/timeline`);
        expect(response.status, path).to.equal(302);
        expect(response.headers.location).to.equal('/.auth/login/twitter?post_login_redirect_uri=/timeline');
      }
      expect(
        (await new Browser().request(`${deployment.url}/.auth/login/x/callback?oauth_token=t&oauth_verifier=v`)).status,
      ).to.equal(404);
      expect((await new Browser().request(`${deployment.url}/.auth/login/xx`)).status).to.equal(404);
    });

    it('the request-token secret travels only inside the sealed transaction cookie', async () => {
      const browser = new Browser();
      const start = await browser.request(`${deployment.url}/.auth/login/twitter`);
      const cookie = start.setCookies.find((c) => c.startsWith('PlatformAuthSessionLogin_'))!;
      expect(cookie).to.contain('HttpOnly');
      const requestToken = new URL(start.headers.location!).searchParams.get('oauth_token')!;
      expect(cookie).to.not.contain(requestToken);
      expect(start.headers.location).to.not.match(/oauth_token_secret/);
    });

    it('a callback with another request token is refused (400), and a denial is a 401 page', async () => {
      const browser = new Browser();
      const start = await browser.request(`${deployment.url}/.auth/login/twitter`);
      const authorize = await browser.request(start.headers.location!);
      const callback = new URL(authorize.headers.location!);
      callback.searchParams.set('oauth_token', 'rt-forged');
      expect((await browser.request(callback.href)).status).to.equal(400);

      twitter.nextAuthorization = 'deny';
      const hops = await new Browser().follow(`${deployment.url}/`);
      expect(hops.at(-1)!.status).to.equal(401);
    });
  });

  describe('a profile of any shape (property test over HTTP)', function () {
    this.timeout(120_000);
    let twitter: TwitterStandIn;
    let deployment: GatewayDeployment;
    before(async () => {
      twitter = await startTwitter();
      deployment = await startGatewayDeployment({
        prepare: async () => ({ document: twitterDocument(twitter), env: { TWITTER_SECRET: twitter.consumerSecret } }),
      });
    });
    after(async () => {
      await deployment.close();
      await twitter.close();
    });

    it('an id_str that is not a string of digits ("", "1e21", " 42", "0") is no Twitter answer: a 502 page, nobody signed in', async () => {
      const answers = ['', '1e21', ' 42', '0', 'twitterapi', -1, 1.5].map((id) => ({
        id_str: id,
        screen_name: 'twitterapi',
      }));
      await assertEachRefused(deployment, answers, (answer) => (twitter.profileAnswer = answer));
    });

    it('a sign-in ends in a clear answer, never a 500; a session it makes serves pages with the numeric id and the screen name', async () => {
      const profile = fc.oneof(
        {
          arbitrary: fc.record(
            {
              id_str: mostly(TWITTER_USER.id_str),
              screen_name: mostly(TWITTER_USER.screen_name),
              name: oddJson,
              email: oddJson,
            },
            { requiredKeys: ['id_str', 'screen_name'] },
          ),
          weight: 4,
        },
        { arbitrary: oddJson, weight: 1 },
      );
      const signedIn = await assertAnyProfileEndsClearly(
        deployment,
        profile,
        (answer) => (twitter.profileAnswer = answer),
        80,
      );
      expect(signedIn).to.be.greaterThan(10);
    });
  });
});
