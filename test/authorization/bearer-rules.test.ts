// Bearer tokens held to the same rules as sessions: their own claims (groups,
// roles), the scopes granted (scp or scope) and the client application; the
// directory's Easy Auth keys (jwtClaimChecks) and its group overage. Against
// the token issuer stand-in, which signs JWTs as the directory does.
import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { startGatewayDeployment, type GatewayDeployment } from '../support/sign-in.js';
import { startTokenIssuer, type TokenIssuer } from '../stand-ins/token-issuer.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';

describe('authorization of bearer tokens (the directory)', function () {
  this.timeout(30_000);
  let directory: TokenIssuer;
  let deployment: GatewayDeployment | undefined;

  const start = async (validation: Record<string, unknown>, authorization?: Record<string, unknown>) => {
    deployment = await startGatewayDeployment({
      prepare: async () => ({
        document: {
          identityProviders: {
            azureActiveDirectory: {
              registration: { openIdIssuer: directory.issuer(`/${TENANT}/v2.0`), clientId: 'app-id' },
              validation: { allowedAudiences: ['api://orders'], ...validation },
            },
          },
          ...(authorization ? { gatehouse: { authorization } } : {}),
        },
        env: {},
      }),
    });
  };
  const token = (extra: Record<string, unknown>) =>
    directory.mint({
      iss: directory.issuer(`/${TENANT}/v2.0`),
      tid: TENANT,
      aud: 'api://orders',
      sub: 'pairwise-sub',
      oid: '00000000-0000-0000-0000-0000000000aa',
      azp: 'client-app-1',
      ...extra,
    });
  const call = async (path: string, bearer: string) => {
    const answer = await new Browser().request(`${deployment!.url}${path}`, {
      headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' },
    });
    return { status: answer.status, body: answer.body };
  };

  beforeEach(async () => {
    directory = await startTokenIssuer();
  });
  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
    await directory.close();
  });

  it('jwtClaimChecks.allowedGroups: a token holding a listed group is let in, any other refused (403)', async () => {
    await start({ jwtClaimChecks: { allowedGroups: ['g-orders'] } });
    expect((await call('/api', await token({ groups: ['g-other', 'g-orders'] }))).status).to.equal(200);
    const refused = await call('/api', await token({ groups: ['g-other'] }));
    expect(refused.status).to.equal(403);
    expect(JSON.parse(refused.body)).to.deep.equal({
      error: 'forbidden',
      error_description: 'The token is valid but not allowed here.',
    });
    expect((await call('/api', await token({ groups: 'g-orders' }))).status, 'a string claim').to.equal(200);
    expect((await call('/api', await token({ Groups: ['g-orders'] }))).status, 'another case').to.equal(403);
  });

  it('the group overage (_claim_names) fails closed, saying the groups could not be read', async () => {
    await start({ jwtClaimChecks: { allowedGroups: ['g-orders'] } });
    const refused = await call(
      '/api',
      await token({
        _claim_names: { groups: 'src1' },
        _claim_sources: { src1: { endpoint: 'https://graph.example' } },
      }),
    );
    expect(refused.status).to.equal(403);
    expect(JSON.parse(refused.body).error_description).to.include('groups could not all be read');
  });

  it('allowedPrincipals: a listed identity or a member of a listed group', async () => {
    await start({
      defaultAuthorizationPolicy: {
        allowedPrincipals: { identities: ['00000000-0000-0000-0000-0000000000bb'], groups: ['g-admins'] },
      },
    });
    expect((await call('/', await token({ groups: ['g-admins'] }))).status).to.equal(200);
    expect((await call('/', await token({ oid: '00000000-0000-0000-0000-0000000000bb' }))).status).to.equal(200);
    expect((await call('/', await token({}))).status).to.equal(403);
  });

  it('jwtClaimChecks.allowedClientApplications: tokens of other client applications are refused', async () => {
    await start({ jwtClaimChecks: { allowedClientApplications: ['client-app-1'] } });
    expect((await call('/', await token({}))).status).to.equal(200);
    expect((await call('/', await token({ azp: 'client-app-2' }))).status).to.equal(403);
    expect((await call('/', await token({ azp: undefined, appid: 'client-app-1' }))).status).to.equal(200);
  });

  it("gatehouse's rules: scopes (scp) and an application's roles, per path", async () => {
    await start(
      {},
      {
        paths: [
          {
            path: '/api/orders/*',
            methods: ['POST'],
            allow: [{ scopes: ['Orders.Write'] }, { roles: ['Orders.Admin'] }],
          },
          { path: '/api/reports/*', allow: [{ applications: ['reporting-app'] }] },
        ],
      },
    );
    expect((await call('/api/orders/1', await token({ scp: 'Orders.Read' }))).status, 'GET: no rule').to.equal(200);
    const post = async (claims: Record<string, unknown>) =>
      (
        await new Browser().request(`${deployment!.url}/api/orders/1`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await token(claims)}`, accept: 'application/json' },
        })
      ).status;
    expect(await post({ scp: 'Orders.Read Orders.Write' })).to.equal(200);
    expect(await post({ scp: 'Orders.Read' })).to.equal(403);
    expect(await post({ scp: 'Orders.Writer' })).to.equal(403);
    expect(await post({ roles: ['Orders.Admin'] })).to.equal(200);
    expect((await call('/api/reports/x', await token({ azp: 'reporting-app' }))).status).to.equal(200);
    expect((await call('/api/reports/x', await token({}))).status).to.equal(403);
  });
});
