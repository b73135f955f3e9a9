// Several gatehouse instances behind one load balancer, sharing a token store
// directory and key, as the README's deployment section describes, in front of
// a provider that rotates refresh tokens and revokes the whole grant when a
// replaced one is used again (oidc-provider, like Auth0 and Okta).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { startDevIdentityProvider, type RunningIdentityProvider } from '../../src/dev/identity-provider.js';
import { createLogger } from '../../src/logging.js';
import { loadAddonCore } from '../../src/native/index.js';
import { attach, createGateway, type Gateway } from '../../src/sidecar/gateway.js';
import { listenEarly, type Listening } from '../../src/sidecar/listen.js';
import { Browser } from '../support/browser.js';
import { listen } from '../support/http.js';
import { CLIENT_ID, defaultDocument } from '../support/sign-in.js';

type Instance = 'a' | 'b';

/** A TCP balancer: each new connection goes to the instance the test queued for it (else to `a`). */
async function startBalancer(targets: Record<Instance, number>): Promise<{ url: string; route: (...next: Instance[]) => void; close: () => Promise<void> }> {
  const queue: Instance[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targets[queue.shift() ?? 'a'], '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    route: (...next) => queue.push(...next),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('several instances sharing one token store', function () {
  this.timeout(60_000);
  let idp: RunningIdentityProvider;
  let balancer: Awaited<ReturnType<typeof startBalancer>>;
  const closers: Array<() => unknown> = [];
  const refreshGrants = () => idp.grants.get('refresh_token') ?? 0;
  /** The provider's refresh answers are held back this long, so that refreshes on two instances overlap. */
  let refreshDelayMs = 0;

  before(async () => {
    const app = await listen(
      http.createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ headers: req.headers }));
      }),
    );
    closers.push(() => app.close());
    const storeDirectory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-instances-'));
    closers.push(() => rmSync(storeDirectory, { recursive: true, force: true }));
    const masterKey = randomBytes(32);
    const fronts: Record<Instance, Listening> = { a: await listenEarly('127.0.0.1', 0), b: await listenEarly('127.0.0.1', 0) };
    balancer = await startBalancer({ a: Number(new URL(fronts.a.url).port), b: Number(new URL(fronts.b.url).port) });
    closers.push(() => balancer.close());
    const secret = randomBytes(16).toString('hex');
    idp = await startDevIdentityProvider({
      clients: [{ clientId: CLIENT_ID, clientSecret: secret, redirectUris: [`${balancer.url}/.auth/login/dev/callback`], postLogoutRedirectUris: [`${balancer.url}/.auth/logout/complete`] }],
      rotateRefreshTokens: true,
      middleware: [
        async (ctx, next) => {
          if (refreshDelayMs > 0 && ctx.path === '/token') await delay(refreshDelayMs);
          await next();
        },
      ],
    });
    closers.push(() => idp.close());
    // Every access token is inside the refresh window: each protected request refreshes.
    const document = { ...defaultDocument(idp.issuer), gatehouse: { refreshWindowSeconds: 7200 }, login: { tokenStore: { enabled: true, fileSystem: { directory: storeDirectory } } } };
    for (const name of ['a', 'b'] as const) {
      const { config } = resolveAuthConfig(document, { TEST_CLIENT_SECRET: secret });
      const gateway: Gateway = await createGateway({ config, upstream: app.url, core: loadAddonCore(), logger: createLogger(process.env.GATEHOUSE_TEST_LOG_LEVEL ?? 'silent'), masterKey, webhook: { env: {} } });
      attach(fronts[name], gateway);
      closers.push(() => fronts[name].close(), () => gateway.close());
    }
  });
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  /** Signs in with every hop through instance `a`, which then holds the new session in its cache. */
  async function signedInThroughA(): Promise<Browser> {
    const browser = new Browser();
    const hops = await browser.follow(`${balancer.url}/protected`);
    const form = hops.at(-1)!;
    const done = await browser.submitForm(form, /\/login$/, { username: 'demo', password: 'demo' });
    expect(done.at(-1)!.status, done.at(-1)!.body.slice(0, 200)).to.equal(200);
    expect(browser.cookie(balancer.url, 'PlatformAuthSession')).not.to.equal(undefined);
    return browser;
  }

  async function through(instance: Instance, browser: Browser, pathname: string) {
    balancer.route(instance);
    return browser.request(`${balancer.url}${pathname}`);
  }

  function accessToken(reply: { status: number; body: string }): string {
    expect(reply.status, reply.body.slice(0, 200)).to.equal(200);
    return (JSON.parse(reply.body) as { headers: Record<string, string> }).headers['x-platform-token-dev-access-token']!;
  }

  it('an instance whose cached session another instance has refreshed takes those tokens instead of redeeming the replaced refresh token', async () => {
    const browser = await signedInThroughA();
    const before = refreshGrants();
    const onB = accessToken(await through('b', browser, '/first')); // b refreshes: the refresh token a cached is replaced
    const onA = accessToken(await through('a', browser, '/second')); // a's cache is older than b's refresh
    expect(onA).to.equal(onB);
    expect(refreshGrants()).to.equal(before + 1);
    // The grant is intact: the next refresh, on either instance, still works.
    const next = accessToken(await through('b', browser, '/third'));
    expect(next).not.to.equal(onB);
    expect(refreshGrants()).to.equal(before + 2);
  });

  it('refreshes that overlap on two instances redeem the refresh token once', async () => {
    const browser = await signedInThroughA();
    const before = refreshGrants();
    refreshDelayMs = 300;
    try {
      balancer.route('a', 'b', 'a', 'b');
      const replies = await Promise.all(['/p1', '/p2', '/p3', '/p4'].map((pathname) => browser.request(`${balancer.url}${pathname}`)));
      const tokens = replies.map(accessToken);
      expect(new Set(tokens).size).to.equal(1);
    } finally {
      refreshDelayMs = 0;
    }
    expect(refreshGrants()).to.equal(before + 1);
    expect(accessToken(await through('a', browser, '/after'))).to.be.a('string');
  });

  it('a session signed out on one instance is not brought back by a refresh on another that still had it cached', async () => {
    const browser = await signedInThroughA();
    accessToken(await through('b', browser, '/cached-on-b'));
    const cookie = browser.cookie(balancer.url, 'PlatformAuthSession')!.value;
    const logout = await through('a', browser, '/.auth/logout');
    expect(logout.status).to.equal(302);
    // The copied cookie, replayed to the instance that still caches the session: its refresh finds the record gone.
    const replay = new Browser();
    replay.setCookie(balancer.url, `PlatformAuthSession=${cookie}; Path=/`);
    const before = refreshGrants();
    const onB = await through('b', replay, '/after-logout');
    expect(onB.status).to.equal(302);
    expect(onB.headers.location).to.match(/\/\.auth\/login\/dev/);
    expect(refreshGrants()).to.equal(before);
    const onA = await through('a', replay, '/after-logout');
    expect(onA.status).to.equal(302);
  });
});
