// Several gatehouse instances behind one load balancer, sharing a token store
// (a directory and key on one host, or Redis, as docs/deployment.md
// describes), in front of a provider that rotates refresh tokens and
// revokes the whole grant when a replaced one is used again (oidc-provider, like
// Auth0 and Okta).
import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { forwardedAccessToken as accessToken, startInstances, type Instances } from '../support/instances.js';
import { startRedis } from '../support/redis-server.js';

/** How the instances share their store: the environment each gets (and what it takes to set it up). */
interface SharedStore {
  readonly name: string;
  /** Whether each instance hears of the others' changes at once (else it trusts its cache for up to 30 s). */
  readonly tellsChanges: boolean;
  setUp(): Promise<{ env: Record<string, string>; close(): Promise<void> }>;
}

const STORES: SharedStore[] = [
  {
    name: 'a token store directory',
    tellsChanges: false,
    setUp: async () => ({ env: {}, close: async () => undefined }),
  },
  {
    name: 'Redis',
    tellsChanges: true,
    setUp: async () => {
      const redis = await startRedis();
      return { env: { GATEHOUSE_REDIS_URL: redis.url }, close: () => redis.stop() };
    },
  },
];

for (const shared of STORES) {
  describe(`several instances sharing one token store: ${shared.name}`, function () {
    this.timeout(60_000);
    let instances: Instances;
    let closeStore: () => Promise<void>;

    before(async () => {
      const store = await shared.setUp();
      closeStore = store.close;
      // Every access token is inside the refresh window: each protected request refreshes.
      instances = await startInstances({ env: store.env, document: { gatehouse: { refreshWindowSeconds: 7200 } } });
    });
    after(async () => {
      await instances?.close();
      await closeStore?.();
    });

    it('an instance whose cached session another instance has refreshed takes those tokens instead of redeeming the replaced refresh token', async () => {
      const browser = await instances.signedInThroughA();
      const before = instances.refreshGrants();
      const onB = accessToken(await instances.through('b', browser, '/first')); // b refreshes: the refresh token a cached is replaced
      const onA = accessToken(await instances.through('a', browser, '/second'));
      if (shared.tellsChanges) {
        // a heard of b's refresh and read the new record; inside the refresh window, it refreshes with the new refresh token.
        expect(onA).not.to.equal(onB);
        expect(instances.refreshGrants()).to.equal(before + 2);
      } else {
        // a's cache is older than b's refresh: the stored record is taken as its refresh's outcome.
        expect(onA).to.equal(onB);
        expect(instances.refreshGrants()).to.equal(before + 1);
      }
      // The grant is intact: the next refresh, on either instance, still works.
      const next = accessToken(await instances.through('b', browser, '/third'));
      expect(next).not.to.equal(onA);
      expect(instances.refreshGrants()).to.equal(before + (shared.tellsChanges ? 3 : 2));
    });

    it('refreshes that overlap on two instances redeem the refresh token once', async () => {
      const browser = await instances.signedInThroughA();
      const before = instances.refreshGrants();
      instances.delayTokenAnswers(300);
      try {
        instances.balancer.route('a', 'b', 'a', 'b');
        const replies = await Promise.all(
          ['/p1', '/p2', '/p3', '/p4'].map((pathname) => browser.request(`${instances.balancer.url}${pathname}`)),
        );
        const tokens = replies.map(accessToken);
        expect(new Set(tokens).size).to.equal(1);
      } finally {
        instances.delayTokenAnswers(0);
      }
      expect(instances.refreshGrants()).to.equal(before + 1);
      expect(accessToken(await instances.through('a', browser, '/after'))).to.be.a('string');
    });

    it('a session signed out on one instance is not brought back by a refresh on another that still had it cached', async () => {
      const browser = await instances.signedInThroughA();
      accessToken(await instances.through('b', browser, '/cached-on-b'));
      const cookie = browser.cookie(instances.balancer.url, 'PlatformAuthSession')!.value;
      const logout = await instances.through('a', browser, '/.auth/logout');
      expect(logout.status).to.equal(302);
      // The copied cookie, replayed to the instance that still caches the session: its refresh finds the record gone.
      const replay = new Browser();
      replay.setCookie(instances.balancer.url, `PlatformAuthSession=${cookie}; Path=/`);
      const before = instances.refreshGrants();
      const onB = await instances.through('b', replay, '/after-logout');
      expect(onB.status).to.equal(302);
      expect(onB.headers.location).to.match(/\/\.auth\/login\/dev/);
      expect(instances.refreshGrants()).to.equal(before);
      const onA = await instances.through('a', replay, '/after-logout');
      expect(onA.status).to.equal(302);
    });
  });
}
