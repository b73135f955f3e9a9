// POST /.auth/login/<provider> with a provider token → an authentication
// token, accepted as X-ZUMO-AUTH like a session cookie.
import { generateKeyPairSync } from 'node:crypto';

import { expect } from 'chai';
import { SignJWT } from 'jose';

import { Browser, type Response } from '../../support/browser.js';
import { forwarded } from '../../support/principal.js';
import { sessionRecordFiles, startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { startGitHub, type GitHubStandIn } from '../../stand-ins/github.js';
import { startTokenIssuer, type TokenIssuer } from '../../stand-ins/token-issuer.js';
import { startTwitter, type TwitterStandIn } from '../../stand-ins/twitter.js';

describe('token exchange and X-ZUMO-AUTH', () => {
  let corp: TokenIssuer;
  let github: GitHubStandIn;
  let twitter: TwitterStandIn;
  let deployment: GatewayDeployment;

  before(async () => {
    [corp, github, twitter] = await Promise.all([startTokenIssuer(), startGitHub(), startTwitter()]);
    deployment = await startGatewayDeployment({
      prepare: async () => ({
        document: {
          identityProviders: {
            customOpenIdConnectProviders: {
              corp: {
                registration: {
                  clientId: 'corp-app',
                  openIdConnectConfiguration: {
                    wellKnownOpenIdConfiguration: `${corp.issuer('/corp')}/.well-known/openid-configuration`,
                  },
                },
              },
            },
            gitHub: {
              registration: { clientId: github.clientId, clientSecretSettingName: 'GITHUB_SECRET' },
              endpoints: { web: github.url, api: `${github.url}/api/v3` },
            },
            twitter: {
              registration: { consumerKey: twitter.consumerKey, consumerSecretSettingName: 'TWITTER_SECRET' },
              endpoints: { api: twitter.url },
            },
          },
          globalValidation: { redirectToProvider: 'corp' },
        },
        env: { GITHUB_SECRET: github.clientSecret, TWITTER_SECRET: twitter.consumerSecret },
      }),
    });
  });
  after(async () => {
    await deployment.close();
    await Promise.all([corp.close(), github.close(), twitter.close()]);
  });

  const exchange = (provider: string, body: unknown, contentType = 'application/json') =>
    new Browser().request(`${deployment.url}/.auth/login/${provider}`, {
      method: 'POST',
      headers: { 'content-type': contentType, accept: 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const withToken = (path: string, token: string, method = 'GET') =>
    new Browser().request(`${deployment.url}${path}`, {
      method,
      headers: { 'x-zumo-auth': token, accept: 'application/json' },
    });
  const idToken = () =>
    corp.mint({ iss: corp.issuer('/corp'), aud: 'corp-app', sub: 'corp-user', email: 'cu@corp.example' });
  function authenticationToken(answer: Response): string {
    expect(answer.status, answer.body).to.equal(200);
    const body = JSON.parse(answer.body) as { authenticationToken: string; user: { userId: string } };
    expect(body.authenticationToken.split('.')).to.have.length(3);
    return body.authenticationToken;
  }

  it('an ID token becomes an authentication token that works on protected paths and /.auth/me', async () => {
    const answer = await exchange('corp', { id_token: await idToken() });
    expect(JSON.parse(answer.body).user).to.deep.equal({ userId: 'corp-user' });
    const token = authenticationToken(answer);
    const page = await withToken('/api/things', token);
    expect(page.status).to.equal(200);
    expect(forwarded(page.body).headers).to.include({
      'x-platform-client-principal-id': 'corp-user',
      'x-platform-client-principal-idp': 'corp',
    });
    const me = await withToken('/.auth/me', token);
    expect(me.status).to.equal(200);
    expect(JSON.parse(me.body)[0]).to.include({ provider_name: 'corp', user_id: 'corp-user' });
    // The provider named in any case (a POST is answered where it was sent): the session is the alias's as configured.
    const shouted = authenticationToken(await exchange('CORP', { id_token: await idToken() }));
    expect(JSON.parse((await withToken('/.auth/me', shouted)).body)[0]).to.include({
      provider_name: 'corp',
      user_id: 'corp-user',
    });
  });

  it('a GitHub access token is checked with GitHub (this app only) before it becomes a session', async () => {
    const token = authenticationToken(await exchange('github', { access_token: github.issueToken() }));
    const page = await withToken('/', token);
    expect(forwarded(page.body).headers).to.include({
      'x-platform-client-principal-name': 'octocat',
      'x-platform-client-principal-idp': 'github',
    });
    const forged = await exchange('github', { access_token: 'gho_not-issued-by-github' });
    expect(forged.status).to.equal(401);
    expect(forged.headers['www-authenticate']).to.match(/invalid_token/);
  });

  it('a Twitter token pair (access_token + access_token_secret) is verified with verify_credentials', async () => {
    const pair = twitter.issueAccessToken();
    const token = authenticationToken(
      await exchange('twitter', { access_token: pair.token, access_token_secret: pair.secret }),
    );
    const page = await withToken('/', token);
    expect(forwarded(page.body).headers).to.include({
      'x-platform-token-twitter-access-token-secret': pair.secret,
      'x-platform-client-principal-name': 'twitterapi',
    });
    expect((await exchange('twitter', { access_token: pair.token, access_token_secret: 'wrong' })).status).to.equal(
      401,
    );
    expect((await exchange('twitter', { access_token: pair.token })).status).to.equal(400);
  });

  it('logout through the token revokes it: the same X-ZUMO-AUTH is refused afterwards', async () => {
    const token = authenticationToken(await exchange('corp', { id_token: await idToken() }));
    expect((await withToken('/x', token)).status).to.equal(200);
    expect((await withToken('/.auth/logout', token)).status).to.equal(302);
    const after = await withToken('/x', token);
    expect(after.status).to.equal(401);
    expect(after.headers['www-authenticate']).to.match(/invalid_token/);
    expect((await withToken('/.auth/me', token)).status).to.equal(401);
  });

  it('the same provider token exchanged again gets its session back: a token replayed in a loop writes one record, not one per call', async () => {
    const sessionId = (token: string) =>
      (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;
    const before = (await sessionRecordFiles(deployment)).length;
    const token = await corp.mint({ iss: corp.issuer('/corp'), aud: 'corp-app', sub: 'replayed-user' });
    const first = authenticationToken(await exchange('corp', { id_token: token }));
    // One after another, then many at once (the first of them makes nothing new either).
    const again = [authenticationToken(await exchange('corp', { id_token: token }))];
    again.push(
      ...(await Promise.all(Array.from({ length: 12 }, () => exchange('corp', { id_token: token })))).map(
        authenticationToken,
      ),
    );
    expect(new Set([first, ...again].map(sessionId)).size).to.equal(1);
    expect((await sessionRecordFiles(deployment)).length).to.equal(before + 1);
    for (const each of again) expect((await withToken('/x', each)).status).to.equal(200);
    // Every exchange is still checked in full: the same token with a wrong signature is refused, not answered from memory.
    expect((await exchange('corp', { id_token: `${token.slice(0, -4)}AAAA` })).status).to.equal(401);
    // Another token of the same user is another sign-in.
    const other = authenticationToken(
      await exchange('corp', {
        id_token: await corp.mint({
          iss: corp.issuer('/corp'),
          aud: 'corp-app',
          sub: 'replayed-user',
          jti: 'another-sign-in',
        }),
      }),
    );
    expect(sessionId(other)).to.not.equal(sessionId(first));
    expect((await sessionRecordFiles(deployment)).length).to.equal(before + 2);
    // Signed out, the session is not handed out again: the token makes a new one, and what was signed out stays so.
    expect((await withToken('/.auth/logout', first)).status).to.equal(302);
    const renewed = authenticationToken(await exchange('corp', { id_token: token }));
    expect(sessionId(renewed)).to.not.equal(sessionId(first));
    expect((await withToken('/x', renewed)).status).to.equal(200);
    for (const each of [first, ...again]) expect((await withToken('/x', each)).status).to.equal(401);
    // A GitHub access token, checked with GitHub each time, makes one session too.
    const githubToken = github.issueToken();
    const githubSessions = new Set<string>();
    for (let i = 0; i < 3; i++)
      githubSessions.add(sessionId(authenticationToken(await exchange('github', { access_token: githubToken }))));
    expect(githubSessions.size).to.equal(1);
  });

  it('refuses a forged, an expired and a foreign-app authentication token', async () => {
    const real = authenticationToken(await exchange('corp', { id_token: await idToken() }));
    const claims = JSON.parse(Buffer.from(real.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.alloc(32, 7));
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...claims, exp: now - 10 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(Buffer.alloc(32, 7));
    const reachedBefore = deployment.upstream.requests.length;
    for (const token of [
      forged,
      expired,
      `${real}x`,
      'not-a-jwt',
      real.replace(/^[^.]+/, Buffer.from('{"alg":"none"}').toString('base64url')),
    ]) {
      const answer = await withToken('/x', token);
      expect(answer.status, token).to.equal(401);
      expect(JSON.parse(answer.body).error).to.equal('invalid_token');
    }
    expect(deployment.upstream.requests.length, 'refused requests never reach the app').to.equal(reachedBefore);
  });

  it('an ID token whose identity holds a control character no header can carry is refused: no session that would fail every request', async () => {
    const token = await corp.mint({
      iss: corp.issuer('/corp'),
      aud: 'corp-app',
      sub: 'corp-user',
      email: 'cu@corp.example',
      name: 'two\nlines',
    });
    const answer = await exchange('corp', { id_token: token });
    expect(answer.status, answer.body).to.equal(401);
    expect(JSON.parse(answer.body).error_description).to.match(/user name holds a control character/);
  });

  it('bad exchange requests get clear 4xx answers and create nothing', async () => {
    expect((await exchange('corp', 'id_token=x', 'application/x-www-form-urlencoded')).status).to.equal(415);
    expect((await exchange('corp', '{not json')).status).to.equal(400);
    expect((await exchange('corp', '[1,2]')).status).to.equal(400);
    expect((await exchange('corp', {})).status).to.equal(400);
    expect((await exchange('corp', { id_token: 42 })).status).to.equal(400);
    expect((await exchange('corp', { id_token: 'x'.repeat(70 * 1024) })).status).to.equal(413);
    expect((await exchange('corp', { id_token: 'abc.def.ghi' })).status).to.equal(401);
    // An opaque access token (as many providers issue) cannot be checked: the answer says what to send instead.
    const opaque = await exchange('corp', { access_token: 'ya29.opaque-access-token' });
    expect(opaque.status).to.equal(401);
    expect(JSON.parse(opaque.body)).to.deep.equal({
      error: 'invalid_token',
      error_description: 'the access token is not a JWT; send the id_token instead',
    });
    expect((await exchange('nobody', { id_token: 'abc' })).status).to.equal(404);
    const wrongAudience = await exchange('corp', {
      id_token: await corp.mint({ iss: corp.issuer('/corp'), aud: 'another-app', sub: 'x' }),
    });
    expect(wrongAudience.status).to.equal(401);
  });

  it("another issuer's token is refused on its issuer, before any signature work: it costs this provider no key refresh", async () => {
    authenticationToken(await exchange('corp', { id_token: await idToken() })); // keys loaded
    const before = corp.jwksFetches;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    // Signed with a key this provider has never seen: were the signature checked first, the unknown kid would fetch the keys again.
    const foreign = await corp.mint(
      { iss: 'https://elsewhere.example', aud: 'corp-app', sub: 'x' },
      { key: privateKey, kid: 'elsewhere-1' },
    );
    const answer = await exchange('corp', { id_token: foreign });
    expect(answer.status).to.equal(401);
    expect(JSON.parse(answer.body)).to.include({ error: 'invalid_token' });
    expect(corp.jwksFetches).to.equal(before);
  });

  it('/.auth/refresh with an authentication token of a session without a refresh token is a 401', async () => {
    const token = authenticationToken(await exchange('github', { access_token: github.issueToken() }));
    const answer = await withToken('/.auth/refresh', token, 'POST');
    expect(answer.status).to.equal(401);
  });
});
