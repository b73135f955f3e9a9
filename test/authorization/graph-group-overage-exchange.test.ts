// The directory's group overage in a client-directed sign-in (POST
// /.auth/login/aad with the ID token and access token a native app got): the
// groups are asked of Microsoft Graph (a stand-in) with the app's access token.
import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { startGatewayDeployment, type GatewayDeployment } from '../support/sign-in.js';
import { startGraph, type GraphStandIn } from '../stand-ins/graph.js';
import { startTokenIssuer, type TokenIssuer } from '../stand-ins/token-issuer.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const STAFF = 'group-staff';

describe('the directory group overage in a client-directed sign-in', () => {
  let directory: TokenIssuer;
  let graph: GraphStandIn;
  let deployment: GatewayDeployment;
  /** Graph's view of the access tokens: token → user. */
  const accessTokens = new Map([
    ['at-alice', 'alice'],
    ['at-bob', 'bob'],
  ]);

  before(async () => {
    directory = await startTokenIssuer();
    graph = await startGraph((token) => Promise.resolve(accessTokens.get(token)));
    graph.groups.set('alice', [STAFF]);
    deployment = await startGatewayDeployment({
      prepare: async () => ({
        document: {
          identityProviders: {
            azureActiveDirectory: {
              registration: { openIdIssuer: directory.issuer(`/${TENANT}/v2.0`), clientId: 'aad-app' },
            },
          },
          gatehouse: {
            authorization: {
              paths: [{ path: '/staff/*', allow: [{ groups: [STAFF] }] }],
              claimSources: { aad: { graph: { endpoint: graph.url } } },
            },
          },
        },
        env: {},
      }),
    });
  });
  after(async () => {
    await deployment.close();
    await Promise.all([directory.close(), graph.close()]);
  });

  const signIn = async (user: string, accessToken?: string) => {
    const idToken = await directory.mint({
      iss: directory.issuer(`/${TENANT}/v2.0`),
      aud: 'aad-app',
      tid: TENANT,
      sub: `sub-${user}`,
      oid: `oid-${user}`,
      _claim_names: { groups: 'src1' },
      _claim_sources: { src1: { endpoint: 'https://graph.windows.net/t/users/u/getMemberObjects' } },
    });
    const answer = await new Browser().request(`${deployment.url}/.auth/login/aad`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ id_token: idToken, ...(accessToken !== undefined ? { access_token: accessToken } : {}) }),
    });
    expect(answer.status, answer.body).to.equal(200);
    return (JSON.parse(answer.body) as { authenticationToken: string }).authenticationToken;
  };
  const get = (path: string, token: string) =>
    new Browser().request(`${deployment.url}${path}`, {
      headers: { 'x-zumo-auth': token, accept: 'application/json' },
    });

  it('asks Graph with the access token given: a member is let in, another is not', async () => {
    expect((await get('/staff/x', await signIn('alice', 'at-alice'))).status).to.equal(200);
    expect((await get('/staff/x', await signIn('bob', 'at-bob'))).status).to.equal(403);
    expect(graph.seen.map((r) => r.headers.authorization)).to.deep.equal(['Bearer at-alice', 'Bearer at-bob']);
  });

  it('without an access token the groups stay unknown, saying so', async () => {
    const token = await signIn('alice');
    expect((await get('/staff/x', token)).status).to.equal(403);
    const me = JSON.parse((await get('/.auth/me', token)).body) as Array<Record<string, unknown>>;
    expect(me[0]!.user_groups_incomplete).to.include('no access token');
  });
});
