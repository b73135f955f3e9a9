// A native app's authorization code exchanged for a session (with a refresh
// token), then /.auth/refresh through X-ZUMO-AUTH, also after the session
// lapsed, within tokenRefreshExtensionHours and not beyond.
import { createHash, randomBytes } from 'node:crypto';

import { expect } from 'chai';

import { startDevIdentityProvider, type RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { Browser } from '../../support/browser.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';

const NATIVE_REDIRECT = 'http://127.0.0.1:9/native-callback';

describe('refresh through an authentication token', function () {
  this.timeout(30_000);
  let idp: RunningIdentityProvider;
  let deployment: GatewayDeployment;

  async function start(extensionHours: number): Promise<void> {
    const secret = randomBytes(8).toString('hex');
    deployment = await startGatewayDeployment({
      prepare: async (front) => {
        idp = await startDevIdentityProvider({
          clients: [
            {
              clientId: 'app',
              clientSecret: secret,
              redirectUris: [`${front}/.auth/login/dev/callback`, NATIVE_REDIRECT],
              postLogoutRedirectUris: [],
            },
          ],
        });
        return {
          document: {
            identityProviders: {
              customOpenIdConnectProviders: {
                dev: {
                  registration: {
                    clientId: 'app',
                    clientCredential: { clientSecretSettingName: 'SECRET' },
                    openIdConnectConfiguration: {
                      wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                    },
                  },
                },
              },
            },
            login: {
              cookieExpiration: { timeToExpiration: '00:00:02' },
              tokenStore: { tokenRefreshExtensionHours: extensionHours },
            },
          },
          env: { SECRET: secret },
          close: () => idp.close(),
        };
      },
    });
  }
  afterEach(() => deployment.close());

  /** What a native app does: the provider's sign-in with its own redirect URI and PKCE, then the code to gatehouse. */
  async function nativeSignIn(): Promise<string> {
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${idp.issuer}/auth`);
    authorize.search = new URLSearchParams({
      client_id: 'app',
      response_type: 'code',
      redirect_uri: NATIVE_REDIRECT,
      scope: 'openid profile offline_access',
      prompt: 'consent',
      state: 's',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const browser = new Browser();
    const hops = await browser.follow(authorize.href);
    const form = hops.at(-1)!;
    // Walk the redirects by hand: the last one goes to the app's own redirect URI, which nothing serves here.
    const action = new URL(form.body.match(/action="([^"]+\/login)"/)![1]!, form.url).href;
    let next = await browser.request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'username=demo&password=demo',
    });
    while ([302, 303].includes(next.status) && !next.headers.location!.startsWith(NATIVE_REDIRECT))
      next = await browser.request(new URL(next.headers.location!, next.url).href);
    const code = new URL(next.headers.location!).searchParams.get('code')!;
    if (!code) throw new Error(`no code: ${next.status} ${next.headers.location} ${next.body.slice(0, 300)}`);
    const exchanged = await new Browser().request(`${deployment.url}/.auth/login/dev`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ authorization_code: code, redirect_uri: NATIVE_REDIRECT, code_verifier: verifier }),
    });
    expect(exchanged.status, exchanged.body).to.equal(200);
    return (JSON.parse(exchanged.body) as { authenticationToken: string }).authenticationToken;
  }
  const call = (path: string, token: string, method = 'GET') =>
    new Browser().request(`${deployment.url}${path}`, {
      method,
      headers: { 'x-zumo-auth': token, accept: 'application/json' },
    });
  const lapse = (ms = 2_500) => new Promise((resolve) => setTimeout(resolve, ms));

  it('a lapsed session is renewed by /.auth/refresh within the extension, with a new authentication token', async () => {
    await start(1);
    const token = await nativeSignIn();
    expect((await call('/data', token)).status).to.equal(200);
    await lapse();
    expect((await call('/data', token)).status, 'lapsed').to.equal(401);
    const refreshed = await call('/.auth/refresh', token, 'POST');
    expect(refreshed.status, refreshed.body).to.equal(200);
    const renewed = (JSON.parse(refreshed.body) as { authenticationToken: string }).authenticationToken;
    expect(renewed).to.not.equal(token);
    expect(idp.grants.get('refresh_token')).to.equal(1);
    expect((await call('/data', renewed)).status).to.equal(200);
  });

  it('logout with a lapsed token ends the session: the token cannot renew it afterwards', async function () {
    this.timeout(40_000);
    await start(1);
    const token = await nativeSignIn();
    // Past the 5 s clock tolerance too, so that the token counts as expired everywhere but where the extension applies.
    await lapse(7_500);
    // Whatever can renew a session can end it: a lapsed token the refresh would still take names its session at logout.
    const out = await call('/.auth/logout', token);
    expect(out.status).to.equal(302);
    expect((await call('/.auth/refresh', token, 'POST')).status).to.equal(401);
    expect(idp.grants.get('refresh_token') ?? 0).to.equal(0);
  });

  it('with tokenRefreshExtensionHours 0 a lapsed session cannot be refreshed', async () => {
    await start(0);
    const token = await nativeSignIn();
    await lapse();
    expect((await call('/.auth/refresh', token, 'POST')).status).to.equal(401);
    expect(idp.grants.get('refresh_token') ?? 0).to.equal(0);
  });
});
