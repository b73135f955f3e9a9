// The enterprise directory (aad): tenant issuers, multi-tenant issuers checked
// against the token's own tid, and the default authorization policy.
import { expect } from 'chai';

import { Browser } from '../../support/browser.js';
import { forwarded } from '../../support/principal.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { startTokenIssuer, type TokenIssuer } from '../../stand-ins/token-issuer.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const OTHER_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';

describe('enterprise directory (aad) bearer tokens', () => {
  let directory: TokenIssuer;
  let deployment: GatewayDeployment | undefined;
  const start = async (aad: Record<string, unknown>) => {
    deployment = await startGatewayDeployment({
      prepare: async () => ({ document: { identityProviders: { azureActiveDirectory: aad } }, env: {} }),
    });
    return deployment;
  };
  const get = (token: string) =>
    new Browser().request(`${deployment!.url}/api`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    });
  const claims = (tenant: string, extra: Record<string, unknown> = {}) => ({
    iss: directory.issuer(`/${tenant}/v2.0`),
    tid: tenant,
    aud: 'api://orders',
    sub: 'pairwise-sub',
    oid: '00000000-0000-0000-0000-0000000000aa',
    preferred_username: 'alice@contoso.example',
    azp: 'client-app-1',
    ...extra,
  });

  beforeEach(async () => {
    directory = await startTokenIssuer();
  });
  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
    await directory.close();
  });

  it('single tenant: -ID is oid, -NAME preferred_username; another tenant’s issuer is refused', async () => {
    await start({
      registration: { openIdIssuer: directory.issuer(`/${TENANT}/v2.0`), clientId: 'app-id' },
      validation: { allowedAudiences: ['api://orders'] },
    });
    const answer = await get(await directory.mint(claims(TENANT)));
    expect(answer.status).to.equal(200);
    expect(forwarded(answer.body).headers).to.include({
      'x-platform-client-principal-id': '00000000-0000-0000-0000-0000000000aa',
      'x-platform-client-principal-name': 'alice@contoso.example',
      'x-platform-client-principal-idp': 'aad',
    });
    expect((await get(await directory.mint(claims(OTHER_TENANT)))).status).to.equal(401);
  });

  it('multi-tenant (common): the issuer must be the template filled with the token’s own tid', async () => {
    await start({
      registration: { openIdIssuer: directory.issuer('/common/v2.0'), clientId: 'app-id' },
      validation: { allowedAudiences: ['api://orders'] },
    });
    expect((await get(await directory.mint(claims(TENANT)))).status).to.equal(200);
    expect((await get(await directory.mint(claims(OTHER_TENANT)))).status).to.equal(200);
    // A tid that does not match the issuer, a missing tid, a tid that is not an id: refused.
    expect(await get(await directory.mint(claims(TENANT, { tid: OTHER_TENANT })))).to.have.property('status', 401);
    expect(await get(await directory.mint(claims(TENANT, { tid: undefined })))).to.have.property('status', 401);
    expect(
      await get(await directory.mint({ ...claims(TENANT), iss: directory.issuer('/a/b/v2.0'), tid: 'a/b' })),
    ).to.have.property('status', 401);
  });

  it('multi-tenant with allowedTenants: other tenants are refused', async () => {
    await start({
      registration: { openIdIssuer: directory.issuer('/organizations/v2.0'), clientId: 'app-id' },
      validation: { allowedAudiences: ['api://orders'], allowedTenants: [TENANT] },
    });
    expect((await get(await directory.mint(claims(TENANT)))).status).to.equal(200);
    expect((await get(await directory.mint(claims(OTHER_TENANT)))).status).to.equal(401);
  });

  it('defaultAuthorizationPolicy: allowedApplications (azp or appid) and allowedPrincipals.identities (oid) → 403 when not met', async () => {
    await start({
      registration: { openIdIssuer: directory.issuer(`/${TENANT}/v2.0`), clientId: 'app-id' },
      validation: {
        allowedAudiences: ['api://orders'],
        defaultAuthorizationPolicy: {
          allowedApplications: ['client-app-1', 'legacy-app'],
          allowedPrincipals: { identities: ['00000000-0000-0000-0000-0000000000aa'] },
        },
      },
    });
    expect((await get(await directory.mint(claims(TENANT)))).status).to.equal(200);
    expect((await get(await directory.mint(claims(TENANT, { azp: undefined, appid: 'legacy-app' })))).status).to.equal(
      200,
    );
    const wrongApp = await get(await directory.mint(claims(TENANT, { azp: 'rogue-app' })));
    expect(wrongApp.status).to.equal(403);
    expect(JSON.parse(wrongApp.body).error).to.equal('forbidden');
    expect((await get(await directory.mint(claims(TENANT, { azp: undefined })))).status).to.equal(403);
    expect(
      (await get(await directory.mint(claims(TENANT, { oid: '00000000-0000-0000-0000-0000000000bb' })))).status,
    ).to.equal(403);
    expect(deployment!.upstream.requests).to.have.length(2);
  });

  it('without allowedAudiences the audience is the client id', async () => {
    await start({ registration: { openIdIssuer: directory.issuer(`/${TENANT}/v2.0`), clientId: 'app-id' } });
    expect((await get(await directory.mint(claims(TENANT, { aud: 'app-id' })))).status).to.equal(200);
    expect((await get(await directory.mint(claims(TENANT)))).status).to.equal(401);
  });
});
