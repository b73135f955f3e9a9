// The directory's group overage looked up in Microsoft Graph (a stand-in
// speaking Graph's protocol), through a real sign-in at oidc-provider shaped as
// the directory: the ID token carries _claim_names/_claim_sources in place of
// groups, and gatehouse asks Graph with the user's access token at sign-in and
// at refresh. Graph refusing, down, throttled or paging too far fails closed.
import { expect } from 'chai';

import type { RunningIdentityProvider } from '../../src/dev/identity-provider.js';
import { Browser } from '../support/browser.js';
import { member, startDirectory, TENANT } from '../support/directory-provider.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { startGatewayDeployment, type GatewayDeployment } from '../support/sign-in.js';
import { startGraph, type GraphStandIn } from '../stand-ins/graph.js';

const STAFF = '0b1f1d5e-0000-4000-8000-00000000staff';

const overage = (login: string) =>
  member(login, `oid-${login}`, {
    preferred_username: `${login}@contoso.example`,
    _claim_names: { groups: 'src1' },
    _claim_sources: { src1: { endpoint: `https://graph.windows.net/${TENANT}/users/oid-${login}/getMemberObjects` } },
  });

describe('the directory group overage looked up in Microsoft Graph', function () {
  this.timeout(60_000);
  let idp: RunningIdentityProvider | undefined;
  let graph: GraphStandIn;
  let deployment: GatewayDeployment | undefined;
  let logs: CapturedLogs;

  const start = async (claimSource: Record<string, unknown> | undefined) => {
    deployment = await startGatewayDeployment({
      logger: logs.logger,
      prepare: async (front) => {
        const directory = await startDirectory({
          front,
          users: {
            alice: overage('alice'),
            bob: overage('bob'),
            // The overage as a token of the implicit flow says it: no reference, only that there are groups.
            carol: member('carol', 'oid-carol', { hasgroups: true }),
            // Groups in the token, no overage: Graph is not asked.
            dave: member('dave', 'oid-dave', { groups: [STAFF] }),
          },
          claims: {
            // oidc-provider sends _claim_names/_claim_sources for the claims they name that a scope asks for.
            openid: ['sub', 'oid', 'tid', 'groups', 'hasgroups'],
            profile: ['preferred_username'],
          },
        });
        idp = directory.idp;
        return {
          document: {
            identityProviders: directory.identityProviders({
              login: { loginParameters: ['scope=openid profile offline_access'] },
            }),
            gatehouse: {
              authorization: {
                paths: [{ path: '/staff/*', allow: [{ groups: [STAFF] }] }],
                ...(claimSource !== undefined ? { claimSources: { azureActiveDirectory: claimSource } } : {}),
              },
            },
          },
          env: directory.env,
        };
      },
    });
    return deployment;
  };

  /** Signs in as `login` through the provider's form; the browser then holds the session. */
  const signIn = async (login: string) => {
    const browser = new Browser();
    const hops = await browser.follow(`${deployment!.url}/`);
    const after = await browser.submitForm(hops.at(-1)!, /\/login$/, { username: login, password: login });
    expect(after.at(-1)!.status, after.at(-1)!.body).to.equal(200);
    return browser;
  };
  const staffPage = (browser: Browser) =>
    browser.request(`${deployment!.url}/staff/x`, { headers: { accept: 'application/json' } });
  const me = async (browser: Browser) =>
    (JSON.parse((await browser.request(`${deployment!.url}/.auth/me`)).body) as Array<Record<string, unknown>>)[0]!;

  beforeEach(async () => {
    logs = capturingLogger('debug');
    // Graph accepts the tokens the identity provider's userinfo endpoint accepts, for their user.
    graph = await startGraph(async (token) => {
      const answer = await fetch(`${idp!.issuer}/me`, { headers: { authorization: `Bearer ${token}` } });
      return answer.ok ? ((await answer.json()) as { sub: string }).sub : undefined;
    });
    graph.groups.set('alice', ['g-other', STAFF]);
    graph.groups.set('bob', ['g-other']);
  });
  afterEach(async () => {
    await deployment?.close();
    await idp?.close();
    await graph.close();
    deployment = undefined;
    idp = undefined;
  });

  it('asks Graph at sign-in with the user’s access token: a member of the group is let in, another is not', async () => {
    await start({ graph: { endpoint: graph.url } });
    const alice = await signIn('alice');
    expect((await staffPage(alice)).status).to.equal(200);
    expect((await me(alice)).user_groups).to.deep.equal(['g-other', STAFF]);
    const bob = await signIn('bob');
    expect((await staffPage(bob)).status).to.equal(403);
    expect(await me(bob)).to.not.have.property('user_groups_incomplete');

    const asked = graph.seen.filter((r) => r.url.startsWith('/v1.0/me/transitiveMemberOf'));
    expect(asked).to.have.length(2);
    expect(asked[0]!.headers.authorization).to.match(/^Bearer \S+$/);
    // Kept in the session: requests do not ask again.
    await staffPage(alice);
    expect(graph.seen).to.have.length(2);
    // The access token is never logged.
    for (const { headers } of asked) expect(logs.raw()).to.not.include(headers.authorization!.slice('Bearer '.length));
  });

  it('follows @odata.nextLink pages, and asks again at refresh: a group given or taken away in Graph counts there', async () => {
    graph.pageSize = 1;
    await start({ graph: { endpoint: graph.url, maxPages: 5 } });
    const bob = await signIn('bob');
    expect((await staffPage(bob)).status).to.equal(403);
    expect(graph.seen).to.have.length(2); // a directory role and a group, one per page
    bob.accept = 'application/json';
    const refresh = async () => {
      const refreshed = await bob.request(`${deployment!.url}/.auth/refresh`, { method: 'POST' });
      expect(refreshed.status, refreshed.body).to.equal(200);
    };

    graph.groups.set('bob', ['g-other', STAFF]);
    await refresh();
    expect(graph.seen).to.have.length(5);
    expect((await staffPage(bob)).status).to.equal(200);

    graph.groups.set('bob', ['g-other']);
    await refresh();
    expect((await staffPage(bob)).status).to.equal(403);
  });

  it('the overage said by hasgroups is looked up too', async () => {
    graph.groups.set('carol', [STAFF]);
    await start({ graph: { endpoint: graph.url } });
    expect((await staffPage(await signIn('carol'))).status).to.equal(200);
    expect(graph.seen).to.have.length(1);
  });

  it('a token carrying its groups is not looked up', async () => {
    await start({ graph: { endpoint: graph.url } });
    expect((await staffPage(await signIn('dave'))).status).to.equal(200);
    expect(graph.seen).to.have.length(0);
  });

  it('more pages than maxPages: the groups stay unknown and group rules refuse, saying why', async () => {
    graph.pageSize = 1;
    await start({ graph: { endpoint: graph.url, maxPages: 2 } });
    const alice = await signIn('alice');
    expect((await staffPage(alice)).status).to.equal(403);
    expect(graph.seen).to.have.length(2);
    expect((await me(alice)).user_groups_incomplete).to.include('more than 2 pages');
  });

  for (const [status, reason] of [
    [503, 'Microsoft Graph answered 503'],
    [429, 'throttling'],
  ] as const)
    it(`Graph answering ${status}: fails closed with a clear reason, never allowed`, async () => {
      graph.failWith = status;
      await start({ graph: { endpoint: graph.url } });
      const alice = await signIn('alice');
      const refused = await staffPage(alice);
      expect(refused.status).to.equal(403);
      expect((await me(alice)).user_groups_incomplete).to.include(reason);
      const logged = logs.lines().find((line) => line.msg === 'request refused by an authorization rule');
      expect(logged).to.include({ reason: 'groups_incomplete', path: '/staff/x' });
      expect(logged!.groups).to.include(reason);
      // Only group rules fail: the rest of the site still opens for the signed-in user.
      expect((await alice.request(`${deployment!.url}/home`)).status).to.equal(200);
    });

  it('Graph unreachable: fails closed with a clear reason', async () => {
    const gone = graph.url;
    await graph.close();
    graph = await startGraph(() => Promise.resolve(undefined));
    await start({ graph: { endpoint: gone } });
    const alice = await signIn('alice');
    expect((await staffPage(alice)).status).to.equal(403);
    expect((await me(alice)).user_groups_incomplete).to.include('could not be reached');
  });

  it('a token Graph refuses (401): fails closed, naming the permission the token needs', async () => {
    const refusing = await startGraph(() => Promise.resolve(undefined));
    try {
      await start({ graph: { endpoint: refusing.url } });
      const alice = await signIn('alice');
      expect((await staffPage(alice)).status).to.equal(403);
      expect((await me(alice)).user_groups_incomplete).to.include('refused the access token (401)');
      expect((await me(alice)).user_groups_incomplete).to.include('User.Read');
    } finally {
      await refusing.close();
    }
  });

  it('without the setting Graph is never asked, and the overage fails closed as before', async () => {
    await start(undefined);
    const alice = await signIn('alice');
    expect((await staffPage(alice)).status).to.equal(403);
    expect((await me(alice)).user_groups_incomplete).to.include('does not look them up in Microsoft Graph');
    expect(graph.seen).to.have.length(0);
  });
});
