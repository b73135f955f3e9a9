// Every OAuth family at once in one deployment: a custom OpenID provider and
// Google (real oidc-provider), GitHub, Facebook and Twitter (stand-ins). With
// no default provider a challenge shows the provider choice; each provider
// then signs in on its own path and yields the documented claim mapping.
import { randomBytes } from 'node:crypto';

import { expect } from 'chai';

import { startDevIdentityProvider, type RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { Browser } from '../../support/browser.js';
import { expectClaimMapping } from '../../support/claim-mapping.js';
import { forwarded } from '../../support/principal.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { facebookDocument, startFacebook, type FacebookStandIn } from '../../stand-ins/facebook.js';
import { gitHubDocument, startGitHub, type GitHubStandIn } from '../../stand-ins/github.js';
import { startTwitter, twitterDocument, type TwitterStandIn } from '../../stand-ins/twitter.js';

/** Each provider's alias and the name sign-in pages give it (built-ins by their own names, a custom provider by its alias). */
const NAMED: ReadonlyArray<readonly [string, string]> = [
  ['corp', 'corp'],
  ['google', 'Google'],
  ['github', 'GitHub'],
  ['facebook', 'Facebook'],
  ['twitter', 'Twitter'],
];

describe('several providers side by side', function () {
  this.timeout(30_000);
  let idp: RunningIdentityProvider;
  let github: GitHubStandIn;
  let facebook: FacebookStandIn;
  let twitter: TwitterStandIn;
  let deployment: GatewayDeployment;
  const secrets = { corp: randomBytes(8).toString('hex'), google: randomBytes(8).toString('hex') };

  before(async () => {
    [github, facebook, twitter] = await Promise.all([startGitHub(), startFacebook(), startTwitter()]);
    deployment = await startGatewayDeployment({
      prepare: async (front) => {
        idp = await startDevIdentityProvider({
          clients: [
            {
              clientId: 'corp-app',
              clientSecret: secrets.corp,
              redirectUris: [`${front}/.auth/login/corp/callback`],
              postLogoutRedirectUris: [],
            },
            {
              clientId: 'google-app',
              clientSecret: secrets.google,
              redirectUris: [`${front}/.auth/login/google/callback`],
              postLogoutRedirectUris: [],
            },
          ],
        });
        const providers = {
          ...(gitHubDocument(github).identityProviders as object),
          ...(facebookDocument(facebook).identityProviders as object),
          ...(twitterDocument(twitter).identityProviders as object),
          google: {
            registration: { clientId: 'google-app', clientSecretSettingName: 'GOOGLE_SECRET' },
            wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
          },
          customOpenIdConnectProviders: {
            corp: {
              registration: {
                clientId: 'corp-app',
                clientCredential: { clientSecretSettingName: 'CORP_SECRET' },
                openIdConnectConfiguration: {
                  wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                },
              },
              login: { scopes: ['openid', 'profile', 'email', 'offline_access'] },
            },
          },
        };
        return {
          document: { identityProviders: providers },
          env: {
            GITHUB_SECRET: github.clientSecret,
            FACEBOOK_SECRET: facebook.appSecret,
            TWITTER_SECRET: twitter.consumerSecret,
            GOOGLE_SECRET: secrets.google,
            CORP_SECRET: secrets.corp,
          },
          close: () => idp.close(),
        };
      },
    });
  });
  after(async () => {
    await deployment.close();
    await Promise.all([github.close(), facebook.close(), twitter.close()]);
  });

  it('with no default provider a challenge is a small provider-choice page linking every provider', async () => {
    const page = await new Browser().request(`${deployment.url}/reports?year=2026`);
    expect(page.status).to.equal(401);
    expect(page.headers['content-type']).to.match(/^text\/html/);
    const choices = [...page.body.matchAll(/<li><a href="([^"]+)">Sign in with ([^<]+)<\/a><\/li>/g)].map((m) => [
      m[2],
      m[1],
    ]);
    expect(choices).to.have.deep.members(
      NAMED.map(([alias, name]) => [
        name,
        `/.auth/login/${alias}?post_login_redirect_uri=${encodeURIComponent('/reports?year=2026')}`,
      ]),
    );
    expect(choices).to.have.length(NAMED.length);
    const api = await new Browser().request(`${deployment.url}/reports`, { headers: { accept: 'application/json' } });
    expect(api.status).to.equal(401);
    // A form POST is not redirected: its 401 page names every way to sign in, each coming back to the page.
    const posted = await new Browser().request(`${deployment.url}/reports?year=2026`, {
      method: 'POST',
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(posted.status).to.equal(401);
    const offered = [...posted.body.matchAll(/<a href="([^"]+)">Sign in with ([^<]+)<\/a>/g)].map((m) => [m[2], m[1]]);
    expect(offered).to.have.deep.members(
      NAMED.map(([alias, name]) => [
        name,
        `/.auth/login/${alias}?post_login_redirect_uri=${encodeURIComponent('/reports?year=2026')}`,
      ]),
    );
    expect(offered).to.have.length(NAMED.length);
  });

  const oauth = [
    ['github', 'github'],
    ['facebook', 'facebook'],
    ['twitter', 'twitter'],
  ] as const;
  for (const [alias, kind] of oauth) {
    it(`${alias}: signs in on its own path with the ${kind} claim mapping`, async () => {
      const hops = await new Browser().follow(`${deployment.url}/.auth/login/${alias}?post_login_redirect_uri=/home`);
      expect(hops.at(-1)!.status).to.equal(200);
      expectClaimMapping(kind, alias, forwarded(hops.at(-1)!.body).headers);
    });
  }

  for (const [alias, kind] of [
    ['corp', 'custom'],
    ['google', 'google'],
  ] as const) {
    it(`${alias}: signs in through the OpenID provider with the ${kind} claim mapping`, async () => {
      const browser = new Browser();
      const hops = await browser.follow(`${deployment.url}/.auth/login/${alias}?post_login_redirect_uri=/home`);
      const after = await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
      expect(after.at(-1)!.status).to.equal(200);
      expectClaimMapping(kind, alias, forwarded(after.at(-1)!.body).headers);
    });
  }

  it('a sign-in path names its provider in any case (one address per start: a redirect keeping the query); a callback only at its exact path', async () => {
    const browser = new Browser();
    const first = await browser.request(`${deployment.url}/.auth/login/GitHub?post_login_redirect_uri=%2Fhome%3Fa%3D1`);
    expect(first.status).to.equal(302);
    expect(first.headers.location).to.equal('/.auth/login/github?post_login_redirect_uri=%2Fhome%3Fa%3D1');
    const hops = await browser.follow(`${deployment.url}/.auth/login/GITHUB?post_login_redirect_uri=/home`);
    expect(hops.at(-1)!.url).to.equal(`${deployment.url}/home`);
    expectClaimMapping('github', 'github', forwarded(hops.at(-1)!.body).headers);
    const head = await new Browser().request(`${deployment.url}/.auth/login/CORP`, { method: 'HEAD' });
    expect([head.status, head.headers.location]).to.deep.equal([302, '/.auth/login/corp']);
    const callback = await new Browser().request(`${deployment.url}/.auth/login/Corp/callback?code=x&state=y`);
    expect(callback.status).to.equal(404);
  });

  it("an unknown provider's page offers the providers there are (links only); JSON says only what went wrong", async () => {
    const page = await new Browser().request(`${deployment.url}/.auth/login/gitlab?post_login_redirect_uri=/home`);
    expect(page.status).to.equal(404);
    expect(page.body).to.contain('No identity provider &#34;gitlab&#34; is configured.');
    const offered = [...page.body.matchAll(/<a href="([^"]+)">Sign in with ([^<]+)<\/a>/g)].map((m) => [m[2], m[1]]);
    expect(offered).to.have.deep.members(NAMED.map(([alias, name]) => [name, `/.auth/login/${alias}`]));
    expect(offered).to.have.length(NAMED.length);
    const api = await new Browser().request(`${deployment.url}/.auth/login/gitlab`, {
      headers: { accept: 'application/json' },
    });
    expect([api.status, JSON.parse(api.body)]).to.deep.equal([
      404,
      { error: 'No identity provider "gitlab" is configured.' },
    ]);
  });

  it('prompt=select_account or login: each provider is asked in its own way to let the person choose the account', async () => {
    const authorize = async (alias: string, prompt: string) =>
      new URL(
        (await new Browser().request(`${deployment.url}/.auth/login/${alias}?prompt=${prompt}`)).headers.location!,
      );
    for (const prompt of ['select_account', 'login']) {
      expect((await authorize('github', prompt)).searchParams.get('prompt'), prompt).to.equal('select_account');
      expect((await authorize('facebook', prompt)).searchParams.get('auth_type'), prompt).to.equal('reauthenticate');
      expect((await authorize('twitter', prompt)).searchParams.get('force_login'), prompt).to.equal('true');
    }
    // Without one (or an empty one), nothing of the kind is asked.
    expect((await authorize('github', '')).searchParams.has('prompt')).to.equal(false);
    expect((await authorize('facebook', '')).searchParams.has('auth_type')).to.equal(false);
    expect((await authorize('twitter', '')).searchParams.has('force_login')).to.equal(false);
    // The development provider says it has an account picker (prompt_values_supported): the custom provider asks for it.
    expect((await authorize('corp', 'select_account')).searchParams.get('prompt')).to.equal('select_account');
    expect((await authorize('google', 'select_account')).searchParams.get('prompt')).to.equal('consent select_account');
  });

  it('a browser signed in at the provider gets its sign-in form again when the sign-in asks for the account picker', async () => {
    const browser = new Browser();
    const first = await browser.follow(`${deployment.url}/.auth/login/corp?post_login_redirect_uri=/home`);
    await browser.submitForm(first.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
    // The provider's session signs the browser in again at once, unless the account picker is asked for.
    const plain = await browser.follow(`${deployment.url}/.auth/login/corp?post_login_redirect_uri=/home`);
    expect(plain.at(-1)!.url).to.equal(`${deployment.url}/home`);
    const picker = await browser.follow(
      `${deployment.url}/.auth/login/corp?post_login_redirect_uri=/home&prompt=select_account`,
    );
    expect(picker.at(-1)!.body).to.match(/<form method="post" action="\/interaction\/[^"]+\/login">/);
    const landed = await browser.submitForm(picker.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
    expect(landed.at(-1)!.url).to.equal(`${deployment.url}/home`);
  });

  it('any other prompt is a 400 that says which are taken, with a link to sign in without it (to the same place)', async () => {
    for (const prompt of ['none', 'consent', 'LOGIN', 'login%20select_account', 'x'.repeat(5000)]) {
      const page = await new Browser().request(
        `${deployment.url}/.auth/login/corp?post_login_redirect_uri=%2Fhome&prompt=${prompt}`,
      );
      expect(page.status, prompt).to.equal(400);
      expect(page.body).to.contain('The prompt must be login or select_account.');
      const links = [...page.body.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[2], m[1]]);
      expect(links).to.deep.equal([['Sign in', '/.auth/login/corp?post_login_redirect_uri=%2Fhome']]);
    }
    const api = await new Browser().request(`${deployment.url}/.auth/login/github?prompt=none`, {
      headers: { accept: 'application/json' },
    });
    expect([api.status, JSON.parse(api.body)]).to.deep.equal([
      400,
      { error: 'The prompt must be login or select_account.' },
    ]);
  });

  it("a session of one provider is not another's: signing in with GitHub then asking /.auth/me shows only GitHub", async () => {
    const browser = new Browser();
    await browser.follow(`${deployment.url}/.auth/login/github`);
    const me = JSON.parse(
      (await browser.request(`${deployment.url}/.auth/me`, { headers: { accept: 'application/json' } })).body,
    ) as Array<{ provider_name: string }>;
    expect(me.map((e) => e.provider_name)).to.deep.equal(['github']);
  });
});
