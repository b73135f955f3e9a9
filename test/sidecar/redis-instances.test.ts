// Two instances sharing Redis (GATEHOUSE_REDIS_URL), over real HTTP: what one
// does is seen by the other at once, and a Redis that goes away turns protected
// requests away with 503 until it is back.
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { createLogger } from '../../src/logging.js';
import { startServer } from '../../src/sidecar/server.js';
import { Browser } from '../support/browser.js';
import { deliver, SECRET } from '../support/http.js';
import { forwardedAccessToken, startInstances, type Instance, type Instances } from '../support/instances.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';

const PUSH = JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'o/r' }, commits: [1] });

/** `check` until it holds or `ms` have passed; then once more, its outcome final. */
async function within<T>(ms: number, check: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (holds(value) || Date.now() > deadline) return value;
    await delay(20);
  }
}

describe('two instances sharing Redis', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let instances: Instances;
  const logs: Record<Instance, CapturedLogs> = { a: capturingLogger('debug'), b: capturingLogger('debug') };

  before(async () => {
    redis = await startRedis();
    instances = await startInstances({
      env: { GATEHOUSE_REDIS_URL: redis.url },
      webhookSecret: SECRET,
      backchannelLogout: true,
      logger: (instance) => logs[instance].logger,
    });
  });
  after(async () => {
    await instances?.close();
    await redis?.stop();
  });

  it('a session signed in on one instance is the same session on the other', async () => {
    const browser = await instances.signedInThroughA();
    const onA = forwardedAccessToken(await instances.through('a', browser, '/page'));
    const onB = forwardedAccessToken(await instances.through('b', browser, '/page'));
    expect(onB).to.equal(onA);
  });

  it('a logout on one instance: the other, which had the session cached, refuses a copy of the cookie at once', async () => {
    const browser = await instances.signedInThroughA();
    forwardedAccessToken(await instances.through('a', browser, '/cached-on-a'));
    forwardedAccessToken(await instances.through('b', browser, '/cached-on-b'));
    const cookie = browser.cookie(instances.balancer.url, 'PlatformAuthSession')!.value;
    expect((await instances.through('b', browser, '/.auth/logout')).status).to.equal(302);
    const replay = new Browser();
    replay.setCookie(instances.balancer.url, `PlatformAuthSession=${cookie}; Path=/`);
    // Within 1 s (the issue's bound); without Redis' notice, a would serve its cache for up to 30 s.
    const onA = await within(
      1_000,
      () => instances.through('a', replay, '/after-logout'),
      (reply) => reply.status === 302,
    );
    expect(onA.status).to.equal(302);
    expect(onA.headers.location).to.match(/\/\.auth\/login\/dev/);
  });

  it("a provider's back-channel sign-out received by one instance: the other, which had the session cached, refuses it at once", async () => {
    const browser = await instances.signedInThroughA();
    forwardedAccessToken(await instances.through('b', browser, '/cached-on-b'));
    const delivered = instances.idp.backchannelLogouts.length;
    // Signing out at the provider itself: it posts the logout token to the balancer, which sends it to a.
    const page = (await browser.follow(`${instances.idp.issuer}/session/end`)).at(-1)!;
    const done = (await browser.submitForm(page, /\/session\/end\/confirm$/, { logout: 'yes' })).at(-1)!;
    expect(done.body).to.contain('You are signed out.');
    expect(instances.idp.backchannelLogouts.length).to.equal(delivered + 1);
    const onB = await within(
      1_000,
      () => instances.through('b', browser, '/.auth/me'),
      (reply) => reply.status === 401,
    );
    expect(onB.status).to.equal(401);
  });

  it("a provider's back-channel sign-out received by an instance that never saw the session: the one that has it cached refuses it at once", async () => {
    const browser = await instances.signedInThroughA(); // cached on a only
    const delivered = instances.idp.backchannelLogouts.length;
    instances.balancer.cutConnections();
    instances.balancer.route('b'); // the provider's post, the next connection to the balancer
    const page = (await browser.follow(`${instances.idp.issuer}/session/end`)).at(-1)!;
    const done = (await browser.submitForm(page, /\/session\/end\/confirm$/, { logout: 'yes' })).at(-1)!;
    expect(done.body).to.contain('You are signed out.');
    expect(instances.idp.backchannelLogouts.length).to.equal(delivered + 1);
    const received = logs.b.lines().filter((line) => line.msg === 'signed out at the provider (back-channel logout)');
    expect(received.at(-1)).to.include({ cachedSessionsEnded: 0 });
    const onA = await within(
      1_000,
      () => instances.through('a', browser, '/.auth/me'),
      (reply) => reply.status === 401,
    );
    expect(onA.status).to.equal(401);
  });

  it('parallel /.auth/refresh calls spread over both instances refresh once at the provider; every instance then serves the new tokens', async () => {
    const browser = await instances.signedInThroughA();
    const before = forwardedAccessToken(await instances.through('b', browser, '/cached-on-b'));
    const grants = instances.refreshGrants();
    instances.delayTokenAnswers(300);
    try {
      instances.balancer.route('a', 'b', 'a', 'b', 'a', 'b', 'a', 'b');
      const replies = await Promise.all(
        Array.from({ length: 8 }, () => browser.request(`${instances.balancer.url}/.auth/refresh`)),
      );
      for (const reply of replies) expect(reply.status, reply.body).to.equal(200);
    } finally {
      instances.delayTokenAnswers(0);
    }
    expect(instances.refreshGrants()).to.equal(grants + 1);
    const onA = forwardedAccessToken(await instances.through('a', browser, '/after'));
    const onB = forwardedAccessToken(await instances.through('b', browser, '/after'));
    expect(onA).not.to.equal(before);
    expect(onB).to.equal(onA);
  });

  it('a delivery handled by one instance is a duplicate on the other; the same id with other bytes is a conflict there', async () => {
    let runs = 0;
    const off = [
      instances.gateways.a.receiver.on('*', () => void runs++),
      instances.gateways.b.receiver.on('*', () => void runs++),
    ];
    try {
      const id = { 'x-forge-delivery': `shared-${Date.now()}` };
      const first = await deliver(instances.urls.a, 'push', PUSH, id);
      const again = await deliver(instances.urls.b, 'push', PUSH, id);
      expect(first.status, first.text).to.equal(200);
      expect(again.status).to.equal(200);
      expect(again.text).to.equal(first.text);
      const other = await deliver(instances.urls.b, 'push', PUSH.replace('main', 'dev'), id);
      expect(other.status).to.equal(409);
      await delay(50); // subscribers run after the response
      expect(runs).to.equal(1);
    } finally {
      for (const unsubscribe of off) unsubscribe();
    }
  });

  it('receivers without an app (serve without --upstream) share delivery ids through Redis as well', async () => {
    const receivers = await Promise.all(
      [0, 1].map(() =>
        startServer({
          port: 0,
          logger: createLogger('silent'),
          env: { GATEHOUSE_REDIS_URL: redis.url },
          webhook: { secret: SECRET, env: {} },
        }),
      ),
    );
    try {
      const id = { 'x-forge-delivery': `receivers-${Date.now()}` };
      const first = await deliver(receivers[0]!.url, 'push', PUSH, id);
      const again = await deliver(receivers[1]!.url, 'push', PUSH, id);
      expect(first.status).to.equal(200);
      expect(again.text).to.equal(first.text);
      expect((await deliver(receivers[1]!.url, 'push', PUSH.replace('main', 'other'), id)).status).to.equal(409);
    } finally {
      await Promise.all(receivers.map((receiver) => receiver.close()));
    }
  });

  it('Redis frozen (answers nothing): a request that needs it answers 503 once the 2 s command deadline passes; thawed, it serves again', async () => {
    const browser = await instances.signedInThroughA(); // cached on a, not on b
    redis.pause();
    try {
      const onB = await instances.through('b', browser, '/while-frozen');
      expect(onB.status, onB.body.slice(0, 200)).to.equal(503);
      expect(onB.headers['retry-after']).to.equal('5');
    } finally {
      redis.resume();
    }
    const back = await within(
      5_000,
      () => instances.through('b', browser, '/after-thaw'),
      (r) => r.status === 200,
    );
    expect(back.status).to.equal(200);
  });

  it('Redis killed: protected requests answer 503 with Retry-After, /.auth/version says so, excluded paths answer; restarted: the sessions it kept work again', async () => {
    const browser = await instances.signedInThroughA();
    const token = forwardedAccessToken(await instances.through('a', browser, '/before'));
    forwardedAccessToken(await instances.through('b', browser, '/before'));
    await redis.kill();
    for (const instance of ['a', 'b', 'a', 'b'] as const) {
      const reply = await within(
        1_000,
        () => instances.through(instance, browser, '/while-down'),
        (r) => r.status === 503,
      );
      expect(reply.status, reply.body.slice(0, 200)).to.equal(503);
      expect(reply.headers['retry-after']).to.equal('5');
    }
    const version = await instances.through('a', browser, '/.auth/version');
    expect(JSON.parse(version.body)).to.deep.include({ tokenStore: { kind: 'redis', available: false } });
    // Not ready (a load balancer sends traffic elsewhere), still alive: /.auth/version stays 200.
    expect(version.status).to.equal(200);
    const notReady = await instances.through('a', browser, '/.auth/ready');
    expect([notReady.status, notReady.headers['retry-after'], JSON.parse(notReady.body)]).to.deep.equal([
      503,
      '5',
      { ready: false, tokenStore: { kind: 'redis', available: false } },
    ]);
    expect((await instances.through('b', new Browser(), '/public/health')).status).to.equal(200);
    // Once per change of state, however many requests were turned away.
    expect(logs.a.lines().filter((line) => /redis store unreachable/.test(String(line.msg)))).to.have.length(1);

    await redis.start();
    const back = await within(
      10_000,
      () => instances.through('a', browser, '/after-restart'),
      (r) => r.status === 200,
    );
    expect(forwardedAccessToken(back)).to.equal(token);
    const onB = await within(
      10_000,
      () => instances.through('b', browser, '/after-restart'),
      (r) => r.status === 200,
    );
    expect(forwardedAccessToken(onB)).to.equal(token);
    expect(JSON.parse((await instances.through('a', browser, '/.auth/version')).body)).to.deep.include({
      tokenStore: { kind: 'redis', available: true },
    });
    const ready = await instances.through('a', browser, '/.auth/ready');
    expect([ready.status, JSON.parse(ready.body)]).to.deep.equal([200, { ready: true }]);
    expect(logs.a.lines().filter((line) => /redis store reachable again/.test(String(line.msg)))).to.have.length(1);
  });
});
