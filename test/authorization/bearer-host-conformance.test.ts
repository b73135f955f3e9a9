// Bearer tokens under authorization rules answered alike by every host: the
// sidecar, the verify endpoint a web server asks, and the native test host
// that plays the IIS module, for tokens of the directory (the token issuer
// stand-in) with and without the group, scope and role the rules ask for.
import { expect } from 'chai';

import { inServerBodyPrefix } from '../../src/inserver/host.js';
import { inServerPolicy } from '../../src/inserver/policy.js';
import { createInterceptor, type NativeInterceptor } from '../../src/native/interceptor.js';
import { loadModuleHost } from '../../src/native/module-host.js';
import { Browser } from '../support/browser.js';
import { startGatewayDeployment, type GatewayDeployment } from '../support/sign-in.js';
import { startTokenIssuer, type TokenIssuer } from '../stand-ins/token-issuer.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';

interface Answer {
  readonly status: number;
  readonly identity?: string;
  readonly body?: string;
}

describe('authorization of bearer tokens: one decision in every host', function () {
  this.timeout(60_000);
  let directory: TokenIssuer;
  let deployment: GatewayDeployment;
  let interceptor: NativeInterceptor;
  const host = loadModuleHost();
  const tokens = new Map<string, string>();

  before(async () => {
    directory = await startTokenIssuer();
    deployment = await startGatewayDeployment({
      prepare: async () => ({
        document: {
          identityProviders: {
            azureActiveDirectory: {
              registration: { openIdIssuer: directory.issuer(`/${TENANT}/v2.0`), clientId: 'app-id' },
              validation: { allowedAudiences: ['api://orders'], jwtClaimChecks: { allowedGroups: ['g-staff'] } },
            },
          },
          gatehouse: {
            authorization: {
              paths: [
                { path: '/api/orders/*', methods: ['POST'], allow: [{ scopes: ['Orders.Write'] }] },
                { path: '/api/admin/*', allow: [{ roles: ['Orders.Admin'] }] },
              ],
            },
          },
        },
        env: {},
      }),
    });
    const mint = (extra: Record<string, unknown>) =>
      directory.mint({
        iss: directory.issuer(`/${TENANT}/v2.0`),
        tid: TENANT,
        aud: 'api://orders',
        sub: 'pairwise-sub',
        oid: '00000000-0000-0000-0000-0000000000aa',
        azp: 'client-app-1',
        preferred_username: 'alice@contoso.example',
        ...extra,
      });
    tokens.set('staff writer', await mint({ groups: ['g-staff'], scp: 'Orders.Read Orders.Write' }));
    tokens.set('staff reader', await mint({ groups: ['g-staff'], scp: 'Orders.Read' }));
    tokens.set('staff admin app', await mint({ groups: ['g-staff'], roles: ['Orders.Admin'] }));
    tokens.set('not staff', await mint({ groups: ['g-other'], scp: 'Orders.Write', roles: ['Orders.Admin'] }));
    tokens.set('overage', await mint({ _claim_names: { groups: 'src1' }, scp: 'Orders.Write' }));
    interceptor = createInterceptor(inServerPolicy(deployment.gateway.layer));
    interceptor.attachHost(host.link, inServerBodyPrefix(deployment.gateway.layer.config));
  });
  after(async () => {
    interceptor?.close();
    await deployment?.close();
    await directory?.close();
  });

  const hostName = () => new URL(deployment.url).host;
  const idOf = (headers: Record<string, unknown>) =>
    `${String(headers['x-platform-client-principal-id'] ?? '')}|${String(headers['x-platform-client-principal-name'] ?? '')}`;
  const REQUESTS = [
    { method: 'GET', path: '/api/orders/1' },
    { method: 'POST', path: '/api/orders/1' },
    { method: 'GET', path: '/api/admin/users' },
    { method: 'GET', path: '/API/Admin/users' },
  ] as const;

  async function sidecar(token: string, request: (typeof REQUESTS)[number]): Promise<Answer> {
    const before = deployment.upstream.requests.length;
    const answer = await new Browser().request(`${deployment.url}${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    });
    if (deployment.upstream.requests.length > before)
      return { status: 200, identity: idOf(deployment.upstream.requests.at(-1)!.headers) };
    return { status: answer.status, body: answer.body };
  }

  async function verify(token: string, request: (typeof REQUESTS)[number]): Promise<Answer> {
    const answer = await new Browser().request(`${deployment.url}/.auth/verify`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        'x-forwarded-host': hostName(),
        'x-forwarded-proto': 'http',
        'x-forwarded-uri': request.path,
        'x-forwarded-method': request.method,
      },
    });
    if (answer.status === 200) return { status: 200, identity: idOf(answer.headers) };
    return { status: answer.status, body: answer.body };
  }

  async function module(token: string, request: (typeof REQUESTS)[number]): Promise<Answer> {
    const [result] = await host.replay(
      [
        {
          method: request.method,
          scheme: 'http',
          host: hostName(),
          path: request.path,
          query: '',
          remoteAddress: '127.0.0.1',
          headers: [
            ['Host', hostName()],
            ['Authorization', `Bearer ${token}`],
            ['Accept', 'application/json'],
          ],
        },
      ],
      1,
    );
    if (result!.kind === 'continue')
      return { status: 200, identity: idOf(Object.fromEntries(result!.set!.map(([n, v]) => [n.toLowerCase(), v]))) };
    return { status: result!.status!, body: result!.body!.toString('utf8') };
  }

  it('every token and request: the same answer from the three hosts, and the one the rules say', async () => {
    const statuses: Record<string, number[]> = {};
    for (const [name, token] of tokens) {
      statuses[name] = [];
      for (const request of REQUESTS) {
        const label = `${name}: ${request.method} ${request.path}`;
        const expected = await sidecar(token, request);
        expect(await module(token, request), `${label} (module)`).to.deep.equal(expected);
        expect(await verify(token, request), `${label} (verify)`).to.deep.equal(expected);
        statuses[name]!.push(expected.status);
      }
    }
    expect(statuses).to.deep.equal({
      'staff writer': [200, 200, 403, 403],
      'staff reader': [200, 403, 403, 403],
      'staff admin app': [200, 403, 200, 200],
      'not staff': [403, 403, 403, 403],
      overage: [403, 403, 403, 403],
    });
  });
});
