// Authorization rules through the sidecar, against a real OpenID provider
// (oidc-provider) issuing groups, roles and verified or unverified addresses:
// who gets in where, the 403 a browser and an API caller get, /.auth/me, the
// metrics, and a group taken away at the provider taking effect at refresh.
import { expect } from 'chai';

import { GatehouseMetrics } from '../../src/metrics/gatehouse-metrics.js';
import { Browser } from '../support/browser.js';
import { forwarded } from '../support/principal.js';
import { sample } from '../support/prometheus.js';
import { capturingLogger } from '../support/logs.js';
import { raw } from '../support/raw-http.js';
import { startRulesDeployment, type RulesDeployment } from '../support/rules-deployment.js';

const USERS = {
  alice: {
    password: 'a',
    claims: {
      name: 'Alice Admin',
      email: 'alice@corp.example',
      email_verified: true,
      roles: ['admin'],
      groups: ['staff', 'writers'],
      realm_access: { roles: ['auditor'] },
    },
  },
  bob: {
    password: 'b',
    claims: { name: 'Bob Staff', email: 'Bob@Corp.Example', email_verified: true, roles: ['reader'], groups: 'staff' },
  },
  // An address of the domain the provider has not verified.
  mallory: {
    password: 'm',
    claims: { name: 'Mallory', email: 'mallory@corp.example', email_verified: false, roles: ['admin'] },
  },
  // A verified address of a domain that merely starts like the allowed one.
  eve: {
    password: 'e',
    claims: { name: 'Eve', email: 'alice@corp.example.evil.example', email_verified: true, groups: ['writers'] },
  },
};

const AUTHORIZATION = {
  paths: [
    { path: '/admin/*', allow: [{ roles: ['admin'] }] },
    { path: '/reports', methods: ['POST'], allow: [{ groups: ['writers'] }] },
    { path: '/audit/*', allow: [{ claims: { 'realm_access.roles': ['auditor'] } }] },
  ],
  default: { allow: [{ emailDomains: ['corp.example'] }] },
};

describe('authorization rules through the sidecar (oidc-provider)', function () {
  this.timeout(60_000);
  let deployment: RulesDeployment;
  let metrics: GatehouseMetrics;

  before(async () => {
    metrics = new GatehouseMetrics();
    deployment = await startRulesDeployment({ users: USERS, authorization: AUTHORIZATION, metrics });
  });
  after(() => deployment.close());

  const signedIn = async (login: string) => {
    const browser = new Browser();
    await deployment.signIn(browser, login, '/');
    return browser;
  };
  const get = (browser: Browser, path: string, init: Parameters<Browser['request']>[1] = {}) =>
    browser.request(`${deployment.url}${path}`, init);

  it('lets in whom each rule allows: the path rule in order, the default for the rest', async () => {
    const alice = await signedIn('alice');
    for (const path of ['/', '/admin/users', '/audit/log']) expect((await get(alice, path)).status, path).to.equal(200);
    expect((await get(alice, '/reports', { method: 'POST' })).status).to.equal(200);
    const answer = await get(alice, '/admin/users');
    expect(forwarded(answer.body).headers['x-platform-client-principal-name']).to.equal('Alice Admin');

    const bob = await signedIn('bob');
    expect((await get(bob, '/')).status).to.equal(200);
    expect((await get(bob, '/reports')).status, 'GET /reports falls to the default').to.equal(200);
    expect((await get(bob, '/reports', { method: 'POST' })).status).to.equal(403);
    expect((await get(bob, '/admin/users')).status).to.equal(403);
    expect((await get(bob, '/audit/log')).status).to.equal(403);
  });

  it('the refusal: a page saying who is signed in, with a sign-in that lets them choose another account; JSON for an API caller', async () => {
    const bob = await signedIn('bob');
    const page = await get(bob, '/admin/users?tab=2');
    expect(page.status).to.equal(403);
    expect(page.headers['content-type']).to.match(/^text\/html/);
    expect(page.body).to.include('You are signed in as Bob Staff');
    expect(page.body).to.include('who may not open this page');
    const link = /<a href="([^"]*)">Sign in with another account<\/a>/.exec(page.body)?.[1]?.replace(/&#38;/g, '&');
    expect(link).to.equal(
      `/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent('/admin/users?tab=2')}&prompt=select_account`,
    );
    expect(page.body).to.include('Sign in with another account');
    expect(deployment.upstream.requests.some((r) => r.url === '/admin/users?tab=2')).to.equal(false);

    const api = await get(bob, '/admin/users', { headers: { accept: 'application/json' } });
    expect(api.status).to.equal(403);
    expect(JSON.parse(api.body)).to.deep.equal({ error: 'You are not allowed here.' });

    // The account link signs in again, at the provider's account choice.
    const again = await bob.request(`${deployment.url}/.auth/login/dev?prompt=select_account`);
    expect(again.status).to.equal(302);
    expect(new URL(again.headers.location!).searchParams.get('prompt')).to.match(/select_account|login/);
  });

  it('an unverified address of the allowed domain, and a look-alike domain, are refused', async () => {
    expect((await get(await signedIn('mallory'), '/')).status).to.equal(403);
    // Mallory's admin role does not lift the default: /admin's rule decides there.
    expect((await get(await signedIn('mallory'), '/admin/x')).status).to.equal(200);
    expect((await get(await signedIn('eve'), '/')).status).to.equal(403);
  });

  it('every spelling of a restricted path is held to its rule', async () => {
    const bob = await signedIn('bob');
    for (const path of ['/ADMIN/users', '/Admin', '/%61dmin/users', '/admin/', '/admin%2fusers'])
      expect((await get(bob, path)).status, path).to.equal(403);
    // Sent as written: a client library would resolve the dot segments before sending.
    const cookie = `PlatformAuthSession=${bob.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    const host = new URL(deployment.url).host;
    for (const path of ['/public/../admin/users', '/public/%2e%2e/admin/users', '/public/..%5cadmin'])
      expect(
        await raw(
          deployment.url,
          `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`,
        ),
        path,
      ).to.match(/^HTTP\/1\.1 403 /);
    // An excluded path stays anonymous-open, first.
    expect((await new Browser().request(`${deployment.url}/public/x`)).status).to.equal(200);
  });

  it('/.auth/me shows the groups and roles the rules judged by', async () => {
    const me = JSON.parse((await get(await signedIn('alice'), '/.auth/me')).body) as Array<Record<string, unknown>>;
    expect(me[0]!.user_groups).to.deep.equal(['staff', 'writers']);
    expect(me[0]!.user_roles).to.deep.equal(['admin']);
    const bob = JSON.parse((await get(await signedIn('bob'), '/.auth/me')).body) as Array<Record<string, unknown>>;
    expect(bob[0]!.user_groups).to.deep.equal(['staff']);
  });

  it('refusals are counted by reason and rule', async () => {
    const before = sample(await metrics.registry.metrics(), 'gatehouse_authorization_refusals_total', {
      reason: 'not_allowed',
      rule: 'paths.0',
    });
    await get(await signedIn('bob'), '/admin/x');
    const text = await metrics.registry.metrics();
    expect(sample(text, 'gatehouse_authorization_refusals_total', { reason: 'not_allowed', rule: 'paths.0' })).to.equal(
      before + 1,
    );
    expect(text).to.not.include('Bob');
  });
});

describe('authorization: groups read again at refresh', function () {
  this.timeout(60_000);
  let deployment: RulesDeployment;
  before(async () => {
    deployment = await startRulesDeployment({
      users: { carol: { password: 'c', claims: { name: 'Carol', groups: ['writers'] } } },
      authorization: { default: { allow: [{ groups: ['writers'] }] } },
    });
  });
  after(() => deployment.close());

  it('a member taken out of the group at the provider loses access at the next refresh', async () => {
    const carol = new Browser();
    await deployment.signIn(carol, 'carol', '/');
    expect((await carol.request(`${deployment.url}/doc`)).status).to.equal(200);
    deployment.users.carol!.claims.groups = ['readers'];
    // Until the session refreshes, it keeps what sign-in read (decided per session, not per request).
    expect((await carol.request(`${deployment.url}/doc`)).status).to.equal(200);
    const refreshed = await carol.request(`${deployment.url}/.auth/refresh`);
    expect(refreshed.status).to.equal(200);
    expect((await carol.request(`${deployment.url}/doc`)).status).to.equal(403);
    const me = JSON.parse((await carol.request(`${deployment.url}/.auth/me`)).body) as Array<Record<string, unknown>>;
    expect(me[0]!.user_groups).to.deep.equal(['readers']);
  });
});

describe('authorization: anonymous callers and what is logged', function () {
  this.timeout(60_000);
  let deployment: RulesDeployment;
  const logs = capturingLogger('info');
  before(async () => {
    deployment = await startRulesDeployment({
      users: { bob: USERS.bob },
      authorization: { paths: [{ path: '/admin/*', allow: [{ roles: ['admin'] }] }] },
      document: { globalValidation: { unauthenticatedClientAction: 'AllowAnonymous', excludedPaths: ['/public/*'] } },
      logger: logs.logger,
    });
  });
  after(() => deployment.close());

  it('anonymous access allowed: still challenged on a path a rule covers, in any spelling', async () => {
    const anonymous = new Browser();
    expect((await anonymous.request(`${deployment.url}/home`)).status).to.equal(200);
    for (const path of ['/admin/x', '/ADMIN/x', '/%61dmin/x'])
      expect((await anonymous.request(`${deployment.url}${path}`)).status, path).to.equal(401);
    expect(deployment.upstream.requests.some((r) => r.url.toLowerCase().includes('dmin'))).to.equal(false);
  });

  it('a refusal is logged with the rule, the reason and the user id, never a token or the cookie', async () => {
    const bob = new Browser();
    await deployment.signIn(bob, 'bob', '/.auth/login/dev');
    expect((await bob.request(`${deployment.url}/admin/x`)).status).to.equal(403);
    const line = logs.lines().find((l) => l.msg === 'request refused by an authorization rule');
    expect(line).to.include({
      rule: 'paths.0',
      reason: 'not_allowed',
      provider: 'dev',
      userId: 'bob',
      path: '/admin/x',
    });
    const cookie = bob.cookie(deployment.url, 'PlatformAuthSession')!.value;
    const text = JSON.stringify(logs.lines());
    expect(text).to.not.include(cookie);
    expect(text).to.not.match(/eyJ[\w-]+\.[\w-]+\./);
  });
});

describe('authorization: groups from the userinfo endpoint (a provider with thin ID tokens)', function () {
  this.timeout(60_000);
  let deployment: RulesDeployment;
  before(async () => {
    deployment = await startRulesDeployment({
      users: { dana: { password: 'd', claims: { name: 'Dana', groups: ['writers'], roles: ['editor'] } } },
      authorization: { default: { allow: [{ groups: ['writers'], roles: ['editor'] }] } },
      thinIdToken: true,
    });
  });
  after(() => deployment.close());

  it('groups and roles only the userinfo endpoint tells are read at sign-in and again at refresh', async () => {
    const dana = new Browser();
    await deployment.signIn(dana, 'dana', '/.auth/login/dev');
    expect((await dana.request(`${deployment.url}/doc`)).status).to.equal(200);
    const refresh = async () => expect((await dana.request(`${deployment.url}/.auth/refresh`)).status).to.equal(200);
    deployment.users.dana!.claims.roles = ['editor', 'viewer'];
    await refresh();
    expect((await dana.request(`${deployment.url}/doc`)).status).to.equal(200);
    const me = JSON.parse((await dana.request(`${deployment.url}/.auth/me`)).body) as Array<Record<string, unknown>>;
    expect(me[0]!.user_roles).to.deep.equal(['editor', 'viewer']);
    deployment.users.dana!.claims.roles = ['viewer'];
    await refresh();
    expect((await dana.request(`${deployment.url}/doc`)).status).to.equal(403);
  });
});
