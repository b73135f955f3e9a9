// DPoP (RFC 9449) with a real oidc-provider that binds this client's tokens: each session has a
// key of its own, kept in its sealed record, and every token, refresh and userinfo request of the
// session carries a new proof made with it; a replayed proof, or the session's refresh token
// without a proof, is refused by the provider.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';

import { expect } from 'chai';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';

import { startDevIdentityProvider, type RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { Browser } from '../../support/browser.js';
import { sessionRecordFiles, signIn, startGatewayDeployment, type Deployment } from '../../support/sign-in.js';

const CLIENT = 'dpop-app';

interface ProviderRequest {
  readonly path: string;
  readonly grantType: string | undefined;
  readonly proof: string | undefined;
  readonly status: number;
}

describe('DPoP-bound tokens (a real oidc-provider)', function () {
  this.timeout(60_000);
  const secret = randomBytes(16).toString('hex');
  const requests: ProviderRequest[] = [];
  let deployment: Deployment;

  before(async () => {
    let idp: RunningIdentityProvider | undefined;
    const started = await startGatewayDeployment({
      prepare: async (front) => {
        idp = await startDevIdentityProvider({
          clients: [
            {
              clientId: CLIENT,
              clientSecret: secret,
              redirectUris: [`${front}/.auth/login/corp/callback`],
              postLogoutRedirectUris: [],
              metadata: { dpop_bound_access_tokens: true },
            },
          ],
          features: { dPoP: { enabled: true } },
          middleware: [
            (async (
              ctx: { path: string; status: number; headers: Record<string, string>; oidc?: { params?: unknown } },
              next: () => Promise<void>,
            ) => {
              await next();
              if (ctx.path !== '/token' && ctx.path !== '/me') return;
              const params = (ctx.oidc?.params ?? {}) as Record<string, string | undefined>;
              requests.push({
                path: ctx.path,
                grantType: params.grant_type,
                proof: ctx.headers.dpop,
                status: ctx.status,
              });
            }) as never,
          ],
        });
        return {
          document: {
            identityProviders: {
              customOpenIdConnectProviders: {
                corp: {
                  registration: {
                    clientId: CLIENT,
                    clientCredential: { clientSecretSettingName: 'CORP_SECRET' },
                    proofOfPossession: 'DPoP',
                    openIdConnectConfiguration: {
                      wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                    },
                  },
                  login: { scopes: ['openid', 'profile', 'offline_access'] },
                },
              },
            },
          },
          env: { CORP_SECRET: secret },
          close: () => idp!.close(),
        };
      },
    });
    deployment = { ...started, idp: idp!, clientSecret: secret };
  });
  after(() => deployment.close());

  /** The thumbprint of the key a proof was made with. */
  const keyOf = (proof: string) => calculateJwkThumbprint(decodeProtectedHeader(proof).jwk as JWK);

  it('a key per session: code, userinfo and refresh requests each carry a new proof made with it', async () => {
    requests.length = 0;
    const first = new Browser();
    expect((await signIn(first, deployment)).final.status).to.equal(200);
    expect((await first.request(`${deployment.url}/.auth/refresh`)).status).to.equal(200);
    const second = new Browser();
    expect((await signIn(second, deployment)).final.status).to.equal(200);

    expect(requests.map((r) => [r.path, r.grantType ?? '', r.status])).to.deep.equal([
      ['/token', 'authorization_code', 200],
      ['/me', '', 200],
      ['/token', 'refresh_token', 200],
      ['/me', '', 200],
      ['/token', 'authorization_code', 200],
      ['/me', '', 200],
    ]);
    for (const request of requests) {
      expect(request.proof, `${request.path} carries a proof`).to.be.a('string');
      expect(decodeProtectedHeader(request.proof!)).to.include({ typ: 'dpop+jwt', alg: 'ES256' });
      expect(decodeProtectedHeader(request.proof!).jwk).not.to.have.property('d');
    }
    const keys = await Promise.all(requests.map((r) => keyOf(r.proof!)));
    expect(keys[1]).to.equal(keys[0]);
    expect(keys[2], 'the refresh proves the same key').to.equal(keys[0]);
    expect(keys[3]).to.equal(keys[0]);
    expect(keys[4], "another session's key").not.to.equal(keys[0]);
    expect(new Set(requests.map((r) => decodeJwt(r.proof!).jti)).size, 'every proof new').to.equal(requests.length);

    // The session's tokens are DPoP-bound, and its key is only in the sealed record.
    const me = JSON.parse((await first.request(`${deployment.url}/.auth/me`)).body) as Array<{ refresh_token: string }>;
    expect(me[0]).not.to.have.property('dpop_key');
    for (const file of await sessionRecordFiles(deployment)) {
      const stored = await fs.readFile(file, 'utf8');
      expect(stored).not.to.include('dpopKey');
      expect(stored).not.to.include('"crv"');
    }
  });

  it('a replayed proof is refused, and so is the refresh token without a proof of the key', async () => {
    requests.length = 0;
    const browser = new Browser();
    expect((await signIn(browser, deployment)).final.status).to.equal(200);
    const me = JSON.parse((await browser.request(`${deployment.url}/.auth/me`)).body) as Array<{
      refresh_token: string;
    }>;
    const refreshToken = me[0]!.refresh_token;
    const proof = requests.find((r) => r.grantType === 'authorization_code')!.proof!;
    const basic = `Basic ${Buffer.from(`${CLIENT}:${secret}`).toString('base64')}`;
    const refresh = (headers: Record<string, string>) =>
      fetch(`${deployment.idp.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic, ...headers },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
      });
    const replayed = await refresh({ dpop: proof });
    expect(replayed.status).to.equal(400);
    const refusal = (await replayed.json()) as { error: string; error_description: string };
    // Same key, method and URL as the proof the provider took a moment ago: only its jti gives it away.
    expect(refusal.error).to.equal('invalid_grant');
    const unproven = await refresh({});
    expect(unproven.status).to.equal(400);
    // gatehouse's own refresh proves the key anew.
    expect((await browser.request(`${deployment.url}/.auth/refresh`)).status).to.equal(200);
    expect(requests.filter((r) => r.grantType === 'refresh_token').at(-1)).to.include({ status: 200 });
  });
});
