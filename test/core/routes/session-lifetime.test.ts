// login.cookieExpiration: how long a session lasts. Seen through token exchange, whose
// authentication token expires with its session (as the session cookie's Max-Age does).
import { expect } from 'chai';

import { LONGEST_DERIVED_SESSION_MS, sessionExpiresAt } from '../../../src/core/session/lifetime.js';
import { Browser } from '../../support/browser.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { startTokenIssuer, type TokenIssuer } from '../../stand-ins/token-issuer.js';

const HOUR_S = 3600;
const DAY_S = 24 * HOUR_S;

describe('session lifetime (login.cookieExpiration)', () => {
  let corp: TokenIssuer;
  const deployments: Record<'derived' | 'fixed', GatewayDeployment> = {} as never;

  before(async () => {
    corp = await startTokenIssuer();
    const start = (convention: string) =>
      startGatewayDeployment({
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
            },
            login: { cookieExpiration: { convention, timeToExpiration: '02:00:00' } },
          },
          env: {},
        }),
      });
    [deployments.derived, deployments.fixed] = await Promise.all([
      start('IdentityProviderDerived'),
      start('FixedTime'),
    ]);
  });
  after(async () => {
    await Promise.all(Object.values(deployments).map((deployment) => deployment.close()));
    await corp.close();
  });

  /** Exchanges an ID token expiring `lifetimeS` from now; the session's lifetime in seconds, as its authentication token states it. */
  async function sessionLifetime(deployment: GatewayDeployment, lifetimeS: number): Promise<number> {
    const now = Math.floor(Date.now() / 1000);
    const idToken = await corp.mint({
      iss: corp.issuer('/corp'),
      aud: 'corp-app',
      sub: 'corp-user',
      iat: now,
      exp: now + lifetimeS,
    });
    const answer = await new Browser().request(`${deployment.url}/.auth/login/corp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id_token: idToken }),
    });
    expect(answer.status, answer.body).to.equal(200);
    const token = (JSON.parse(answer.body) as { authenticationToken: string }).authenticationToken;
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
      iat: number;
      exp: number;
    };
    return claims.exp - claims.iat;
  }

  it('IdentityProviderDerived: the session ends when the ID token does', async () => {
    expect(await sessionLifetime(deployments.derived, 5 * HOUR_S)).to.be.within(5 * HOUR_S - 5, 5 * HOUR_S);
    expect(await sessionLifetime(deployments.derived, 10 * 60)).to.be.within(10 * 60 - 5, 10 * 60);
  });

  it('IdentityProviderDerived: at most 30 days, however long the ID token lasts (sign-outs at the provider are kept that long)', async () => {
    expect(await sessionLifetime(deployments.derived, 90 * DAY_S)).to.be.within(30 * DAY_S - 5, 30 * DAY_S);
  });

  it('FixedTime: timeToExpiration, whatever the ID token says', async () => {
    expect(await sessionLifetime(deployments.fixed, 5 * HOUR_S)).to.be.within(2 * HOUR_S - 5, 2 * HOUR_S);
    expect(await sessionLifetime(deployments.fixed, 90 * DAY_S)).to.be.within(2 * HOUR_S - 5, 2 * HOUR_S);
  });

  it('IdentityProviderDerived without an assertion (OAuth 2.0 and 1.0a providers): timeToExpiration', () => {
    const now = Date.parse('2026-11-24T12:00:00Z');
    const derived = { convention: 'IdentityProviderDerived', lifetimeMs: 2 * HOUR_S * 1000 } as const;
    expect(sessionExpiresAt(derived, now)).to.equal(now + 2 * HOUR_S * 1000);
    expect(sessionExpiresAt(derived, now, now + 60_000)).to.equal(now + 60_000);
    expect(sessionExpiresAt(derived, now, now + 2 * LONGEST_DERIVED_SESSION_MS)).to.equal(
      now + LONGEST_DERIVED_SESSION_MS,
    );
  });
});
