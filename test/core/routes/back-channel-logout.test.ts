// POST /.auth/logout/backchannel/<provider> with logout tokens the test signs
// itself (OpenID Connect Back-Channel Logout 1.0): which sessions a good one
// ends, and every malformed, forged or replayed one, which must end nothing.
// Sessions come from token exchange, so each ID token's sub, sid and iat are
// the test's to choose.
import { generateKeyPairSync, randomBytes } from 'node:crypto';

import { expect } from 'chai';
import { SignJWT, type JWTPayload } from 'jose';

import { BACK_CHANNEL_LOGOUT_EVENT } from '../../../src/core/tokens/logout-event.js';
import { Browser, type Response } from '../../support/browser.js';
import { capturingLogger, type CapturedLogs } from '../../support/logs.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { startGitHub, type GitHubStandIn } from '../../stand-ins/github.js';
import { startTokenIssuer, type TokenIssuer } from '../../stand-ins/token-issuer.js';

const now = () => Math.floor(Date.now() / 1000);

describe('back-channel logout: the endpoint and its logout tokens', () => {
  let corp: TokenIssuer;
  let partner: TokenIssuer;
  let github: GitHubStandIn;
  let deployment: GatewayDeployment;
  let logs: CapturedLogs;

  before(async () => {
    [corp, partner, github] = await Promise.all([startTokenIssuer(), startTokenIssuer(), startGitHub()]);
    logs = capturingLogger();
    const discovery = (issuer: TokenIssuer, path: string) => ({
      wellKnownOpenIdConfiguration: `${issuer.issuer(path)}/.well-known/openid-configuration`,
    });
    deployment = await startGatewayDeployment({
      logger: logs.logger,
      prepare: async () => ({
        document: {
          identityProviders: {
            customOpenIdConnectProviders: {
              corp: { registration: { clientId: 'corp-app', openIdConnectConfiguration: discovery(corp, '/corp') } },
              partner: {
                registration: { clientId: 'partner-app', openIdConnectConfiguration: discovery(partner, '/partner') },
              },
            },
            gitHub: {
              registration: { clientId: github.clientId, clientSecretSettingName: 'GITHUB_SECRET' },
              endpoints: { web: github.url, api: `${github.url}/api/v3` },
            },
          },
          globalValidation: { redirectToProvider: 'corp' },
        },
        env: { GITHUB_SECRET: github.clientSecret },
      }),
    });
  });
  after(async () => {
    await deployment.close();
    await Promise.all([corp.close(), partner.close(), github.close()]);
  });

  /** A session made with an ID token of corp's (token exchange); its authentication token. */
  async function sessionOf(claims: JWTPayload): Promise<string> {
    const idToken = await corp.mint({ iss: corp.issuer('/corp'), aud: 'corp-app', ...claims });
    const answer = await new Browser().request(`${deployment.url}/.auth/login/corp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ id_token: idToken }),
    });
    expect(answer.status, answer.body).to.equal(200);
    return (JSON.parse(answer.body) as { authenticationToken: string }).authenticationToken;
  }
  const signedIn = async (token: string) =>
    (
      await new Browser().request(`${deployment.url}/.auth/me`, {
        headers: { 'x-zumo-auth': token, accept: 'application/json' },
      })
    ).status === 200;

  /** corp's logout token for `claims` (iat now, exp in two minutes, a jti, the logout event), as a provider signs one. */
  function logoutToken(claims: JWTPayload, options: Parameters<TokenIssuer['mint']>[1] = {}): Promise<string> {
    return corp.mint(
      {
        iss: corp.issuer('/corp'),
        aud: 'corp-app',
        iat: now(),
        exp: now() + 120,
        jti: randomBytes(8).toString('hex'),
        events: { [BACK_CHANNEL_LOGOUT_EVENT]: {} },
        ...claims,
      },
      { header: { typ: 'logout+jwt' }, ...options },
    );
  }
  function post(body: string, provider = 'corp', headers: Record<string, string> = {}): Promise<Response> {
    return new Browser().request(`${deployment.url}/.auth/logout/backchannel/${provider}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });
  }
  const deliver = (token: string, provider = 'corp') =>
    post(new URLSearchParams({ logout_token: token }).toString(), provider);

  function expectRefused(answer: Response, status: number, description: RegExp): void {
    expect(answer.status, answer.body).to.equal(status);
    expect(answer.headers['cache-control']).to.equal('no-store');
    const body = JSON.parse(answer.body) as { error: string; error_description: string };
    expect(body.error).to.equal('invalid_request');
    expect(body.error_description).to.match(description);
  }

  it('a logout token naming a provider session (sid) ends the sessions made in it, and no other: 200, no body, no-store', async () => {
    const sid = randomBytes(6).toString('hex');
    const [inIt, alsoInIt, another, otherUser] = await Promise.all([
      sessionOf({ sub: 'user-1', sid }),
      sessionOf({ sub: 'user-1', sid }),
      sessionOf({ sub: 'user-1', sid: `${sid}-b` }),
      sessionOf({ sub: 'user-2', sid: `${sid}-c` }),
    ]);
    const answer = await deliver(await logoutToken({ sub: 'user-1', sid }));
    expect(answer.status, answer.body).to.equal(200);
    expect(answer.body).to.equal('');
    expect(answer.headers['cache-control']).to.equal('no-store');
    expect(await signedIn(inIt)).to.equal(false);
    expect(await signedIn(alsoInIt)).to.equal(false);
    expect(await signedIn(another)).to.equal(true);
    expect(await signedIn(otherUser)).to.equal(true);
    // Logged without the sid or the user (a sid is all a front-channel logout needs to name a session).
    const line = logs
      .lines()
      .find((l) => l.msg === 'signed out at the provider (back-channel logout)' && l.provider === 'corp');
    expect(line).to.include({ scope: 'provider session' });
    expect(logs.raw()).not.to.contain(sid);
  });

  it('a logout token is no ID token or access token: token exchange and bearer use refuse it (it would sign in the user it says signed out)', async () => {
    const exchange = (body: Record<string, string>) =>
      new Browser().request(`${deployment.url}/.auth/login/corp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      });
    const bearer = (token: string) =>
      new Browser().request(`${deployment.url}/orders`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      });
    // Explicitly typed (logout+jwt), typed as a plain JWT, or not typed at all: the event tells it apart.
    for (const header of [{ typ: 'logout+jwt' }, { typ: 'JWT' }, {}]) {
      const token = await logoutToken({ sub: 'victim', sid: 'sid-x' }, { header });
      const lines = await logs.during(async () => {
        for (const answer of [
          await exchange({ id_token: token }),
          await exchange({ access_token: token }),
          await bearer(token),
        ]) {
          expect(answer.status, `${JSON.stringify(header)}: ${answer.body}`).to.equal(401);
        }
      });
      // Each refusal logged with why.
      expect(
        lines.filter((line) => JSON.stringify(line).includes('a logout token, not accepted here')),
        JSON.stringify(lines),
      ).to.have.length(3);
    }
    // Typed as one, even without the event.
    const typed = await corp.mint(
      { iss: corp.issuer('/corp'), aud: 'corp-app', sub: 'victim', iat: now(), exp: now() + 120 },
      { header: { typ: 'application/Logout+JWT' } },
    );
    expect((await exchange({ id_token: typed })).status).to.equal(401);
    // The same claims without the event and the type are an ID token, and taken.
    const idToken = await corp.mint({
      iss: corp.issuer('/corp'),
      aud: 'corp-app',
      sub: 'victim',
      iat: now(),
      exp: now() + 120,
    });
    expect((await exchange({ id_token: idToken })).status).to.equal(200);
    expect((await bearer(idToken)).status).to.equal(200);
  });

  it('a sid alone is enough (sub is optional), and a token with both names the session by its sid', async () => {
    const sid = randomBytes(6).toString('hex');
    const session = await sessionOf({ sub: 'user-3', sid });
    expect((await deliver(await logoutToken({ sub: undefined, sid }))).status).to.equal(200);
    expect(await signedIn(session)).to.equal(false);
  });

  it('a logout token naming the user only (no sid) ends every session of theirs made before it, not one made after it; replayed later, it ends nothing more', async () => {
    const issuedAt = now();
    const [older, oldest, newer, otherUser] = await Promise.all([
      sessionOf({ sub: 'user-4', sid: 'x-1', iat: issuedAt - 100 }),
      sessionOf({ sub: 'user-4', iat: issuedAt - 200 }),
      sessionOf({ sub: 'user-4', sid: 'x-2', iat: issuedAt - 10 }),
      sessionOf({ sub: 'user-5', iat: issuedAt - 100 }),
    ]);
    const logout = await logoutToken({ sub: 'user-4', iat: issuedAt - 50 });
    expect((await deliver(logout)).status).to.equal(200);
    expect([
      await signedIn(older),
      await signedIn(oldest),
      await signedIn(newer),
      await signedIn(otherUser),
    ]).to.deep.equal([false, false, true, true]);
    const line = logs.lines().findLast((l) => l.msg === 'signed out at the provider (back-channel logout)');
    expect(line).to.include({ scope: 'user' });
    // The same token again (a retried delivery, or a captured one replayed): answered, and nothing more ends.
    expect((await deliver(logout)).status).to.equal(200);
    // An older one neither: a user's sign-out never moves later.
    expect(await deliver(await logoutToken({ sub: 'user-4', iat: issuedAt - 300 }))).to.have.property('status', 200);
    const signedInAfterwards = await sessionOf({ sub: 'user-4', iat: issuedAt - 20 });
    expect(await signedIn(newer)).to.equal(true);
    expect(await signedIn(signedInAfterwards)).to.equal(true);
    // A newer logout ends it.
    expect(await deliver(await logoutToken({ sub: 'user-4' }))).to.have.property('status', 200);
    expect(await signedIn(newer)).to.equal(false);
    expect(await signedIn(signedInAfterwards)).to.equal(false);
  });

  describe('refused (400 invalid_request, and no session ends)', () => {
    let session: string;
    const sid = 'refusal-sid';
    beforeEach(async () => {
      session = await sessionOf({ sub: 'victim', sid });
    });
    afterEach(async () => {
      expect(await signedIn(session)).to.equal(true);
    });
    const claims = { sub: 'victim', sid };
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

    it('alg "none"', async () => {
      const token = `${encode({ alg: 'none', typ: 'logout+jwt' })}.${encode({ iss: corp.issuer('/corp'), aud: 'corp-app', iat: now(), exp: now() + 120, jti: 'j', events: { [BACK_CHANNEL_LOGOUT_EVENT]: {} }, ...claims })}.`;
      expectRefused(await deliver(token), 400, /^logout token /);
    });

    it("HS256 signed with the provider's public key as the secret", async () => {
      const publicPem = corp.keys[0]!.publicKey.export({ type: 'spki', format: 'pem' });
      const token = await new SignJWT({
        iss: corp.issuer('/corp'),
        aud: 'corp-app',
        jti: 'j',
        events: { [BACK_CHANNEL_LOGOUT_EVENT]: {} },
        ...claims,
      })
        .setProtectedHeader({ alg: 'HS256', kid: corp.keys[0]!.kid })
        .setIssuedAt()
        .setExpirationTime('2m')
        .sign(Buffer.from(publicPem));
      expectRefused(await deliver(token), 400, /algorithm not allowed/);
    });

    it('signed by a key that is not the provider’s, under its kid or an unknown one', async () => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      expectRefused(await deliver(await logoutToken(claims, { key: privateKey })), 400, /signature invalid/);
      expectRefused(
        await deliver(await logoutToken(claims, { key: privateKey, kid: 'made-up' })),
        400,
        /^logout token /,
      );
    });

    it('a tampered payload', async () => {
      const [header, , signature] = (await logoutToken({ sub: 'someone-else', sid: 'other' })).split('.');
      const payload = encode({
        iss: corp.issuer('/corp'),
        aud: 'corp-app',
        iat: now(),
        exp: now() + 120,
        jti: 'j',
        events: { [BACK_CHANNEL_LOGOUT_EVENT]: {} },
        ...claims,
      });
      expectRefused(await deliver(`${header}.${payload}.${signature}`), 400, /signature invalid/);
    });

    it('another issuer, another audience, or another configured provider’s token at this provider’s endpoint', async () => {
      expectRefused(
        await deliver(await logoutToken({ ...claims, iss: 'https://evil.example' })),
        400,
        /iss check_failed/,
      );
      expectRefused(await deliver(await logoutToken({ ...claims, aud: 'another-app' })), 400, /aud/);
      const partners = await partner.mint({
        iss: partner.issuer('/partner'),
        aud: 'partner-app',
        iat: now(),
        exp: now() + 120,
        jti: 'j',
        events: { [BACK_CHANNEL_LOGOUT_EVENT]: {} },
        ...claims,
      });
      expectRefused(await deliver(partners), 400, /iss check_failed/);
      // At the partner's endpoint it is a good token, but the session is corp's: nothing of corp's ends.
      expect((await deliver(partners, 'partner')).status).to.equal(200);
    });

    it('expired, without exp, issued in the future, without iat', async () => {
      expectRefused(
        await deliver(await logoutToken({ ...claims, iat: now() - 600, exp: now() - 300 })),
        400,
        /expired/,
      );
      expectRefused(await deliver(await logoutToken({ ...claims, exp: undefined })), 400, /exp missing/);
      expectRefused(
        await deliver(await logoutToken({ ...claims, iat: now() + 3600, exp: now() + 3700 })),
        400,
        /iat in the future/,
      );
      expectRefused(await deliver(await logoutToken({ ...claims, iat: undefined })), 400, /iat missing/);
    });

    it('not a logout: no event, the event in the drafts’ array form, the event not an object, or a nonce (an ID token)', async () => {
      expectRefused(
        await deliver(await logoutToken({ ...claims, events: undefined })),
        400,
        /no back-channel logout event/,
      );
      expectRefused(
        await deliver(await logoutToken({ ...claims, events: [BACK_CHANNEL_LOGOUT_EVENT] })),
        400,
        /no back-channel logout event/,
      );
      expectRefused(
        await deliver(await logoutToken({ ...claims, events: { [BACK_CHANNEL_LOGOUT_EVENT]: true } })),
        400,
        /no back-channel logout event/,
      );
      expectRefused(await deliver(await logoutToken({ ...claims, nonce: 'n-1' })), 400, /nonce/);
      // The session's own ID token, sent as a logout token: what a leaked ID token must not be able to do.
      const idToken = await corp.mint({ iss: corp.issuer('/corp'), aud: 'corp-app', ...claims, nonce: 'n-2' });
      expectRefused(await deliver(idToken), 400, /no back-channel logout event/);
    });

    it('without a jti, or one that is not a non-empty string (§2.4 requires it)', async () => {
      expectRefused(await deliver(await logoutToken({ ...claims, jti: undefined })), 400, /jti missing/);
      expectRefused(await deliver(await logoutToken({ ...claims, jti: '' })), 400, /jti invalid/);
      expectRefused(await deliver(await logoutToken({ ...claims, jti: 42 as unknown as string })), 400, /jti invalid/);
    });

    it('neither sub nor sid, or one of them not a non-empty string', async () => {
      expectRefused(await deliver(await logoutToken({ sub: undefined, sid: undefined })), 400, /neither sub nor sid/);
      expectRefused(await deliver(await logoutToken({ sub: '', sid })), 400, /sub invalid/);
      expectRefused(await deliver(await logoutToken({ sub: 'victim', sid: 7 })), 400, /sid invalid/);
    });

    it('malformed, oversized (13 KB), or not signed at all', async () => {
      expectRefused(await deliver('not-a-jwt'), 400, /malformed/);
      expectRefused(await deliver('a.b.c.d.e'), 400, /malformed/);
      expectRefused(await deliver(await logoutToken({ ...claims, padding: 'x'.repeat(13 * 1024) })), 400, /too large/);
      expectRefused(await deliver(`${encode({ alg: 'RS256' })}.%%%.`), 400, /malformed/);
    });

    it('no logout_token, an empty one, or two', async () => {
      expectRefused(await post(''), 400, /no logout_token/);
      expectRefused(await post('logout_token='), 400, /no logout_token/);
      const token = await logoutToken(claims);
      expectRefused(
        await post(
          new URLSearchParams([
            ['logout_token', token],
            ['logout_token', token],
          ]).toString(),
        ),
        400,
        /more than one logout_token/,
      );
    });

    it('not a form (415), over 64 KiB (413), another method (405, Allow: POST)', async () => {
      const token = await logoutToken(claims);
      expectRefused(
        await post(JSON.stringify({ logout_token: token }), 'corp', { 'content-type': 'application/json' }),
        415,
        /form/,
      );
      expectRefused(
        await post(`logout_token=${token}&padding=${'x'.repeat(65 * 1024)}`),
        413,
        /larger than 65536 bytes/,
      );
      const get = await new Browser().request(`${deployment.url}/.auth/logout/backchannel/corp?logout_token=${token}`);
      expect(get.status).to.equal(405);
      expect(get.headers.allow).to.equal('POST');
    });

    it('an unknown provider, a provider named in another case (the registered URL is exact), a provider without back-channel logout: 404', async () => {
      const token = await logoutToken(claims);
      for (const provider of ['nobody', 'CORP'])
        expectRefused(
          await deliver(token, provider),
          404,
          new RegExp(`^no identity provider "${provider}" is configured$`),
        );
      expectRefused(await deliver(token, 'github'), 404, /GitHub has no back-channel logout/);
    });
  });

  it('a provider whose metadata and keys cannot be fetched: 503 temporarily_unavailable, logged', async () => {
    const gone = await startTokenIssuer();
    const issuerUrl = gone.issuer('/gone');
    const logout = await gone.mint({
      iss: issuerUrl,
      aud: 'gone-app',
      sub: 'u',
      sid: 's',
      jti: 'j',
      exp: now() + 120,
      events: { [BACK_CHANNEL_LOGOUT_EVENT]: {} },
    });
    await gone.close();
    const captured = capturingLogger();
    const other = await startGatewayDeployment({
      logger: captured.logger,
      prepare: async () => ({
        document: {
          identityProviders: {
            customOpenIdConnectProviders: {
              gone: {
                registration: {
                  clientId: 'gone-app',
                  openIdConnectConfiguration: {
                    wellKnownOpenIdConfiguration: `${issuerUrl}/.well-known/openid-configuration`,
                  },
                },
              },
            },
          },
        },
        env: {},
      }),
    });
    try {
      const answer = await new Browser().request(`${other.url}/.auth/logout/backchannel/gone`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: logout }).toString(),
      });
      expect(answer.status, answer.body).to.equal(503);
      expect(JSON.parse(answer.body)).to.include({ error: 'temporarily_unavailable' });
      expect(captured.lines().some((l) => l.msg === 'identity provider unavailable' && l.provider === 'gone')).to.equal(
        true,
      );
    } finally {
      await other.close();
    }
  });
});
