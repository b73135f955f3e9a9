import { randomBytes } from 'node:crypto';

import { expect } from 'chai';

import { setTimeout as delay } from 'node:timers/promises';

import { startAuthRuntime } from '../../../src/core/auth-runtime.js';
import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import { deriveKey } from '../../../src/core/crypto/keys.js';
import { newSessionId, signSessionId } from '../../../src/core/crypto/session-id.js';
import type { RequestView } from '../../../src/core/http/request-view.js';
import { parseRedisUrl, RedisLink, RedisSettingsError } from '../../../src/core/token-store/redis-link.js';
import { redisSettings } from '../../../src/core/token-store/redis-settings.js';
import { LOCK_LEASE_MS, LockLostError, RedisTokenStore } from '../../../src/core/token-store/redis.js';
import { StoreUnavailableError } from '../../../src/core/token-store/token-store.js';
import { createLogger } from '../../../src/logging.js';
import { fallbackCore } from '../../../src/native/index.js';
import { capturingLogger } from '../../support/logs.js';
import {
  startRedis,
  startRedisCluster,
  startRedisSentinel,
  startRedisSingle,
  type TestRedis,
  type TestTopology,
} from '../../support/redis-server.js';
import { tokenStoreConformance } from './conformance.js';

describe('RedisTokenStore: what Redis holds, locks, notices, failures (a real redis-server)', function () {
  let redis: TestRedis;
  let raw: RedisLink;
  const opened: RedisLink[] = [];
  const masterKey = randomBytes(32);
  const later = () => Date.now() + 3_600_000;

  before(async () => {
    redis = await startRedis();
    raw = await open('raw:');
  });
  after(async () => {
    await Promise.all(opened.map((link) => link.close()));
    await redis?.stop();
  });

  async function open(prefix: string): Promise<RedisLink> {
    const link = new RedisLink({
      url: new URL(redis.url),
      prefix,
      logger: createLogger('silent'),
      commandTimeoutMs: 500,
    });
    opened.push(link);
    expect(await link.open(5_000)).to.equal(true);
    return link;
  }

  async function storeWith(prefix = `t-${randomBytes(4).toString('hex')}:`) {
    const link = await open(prefix);
    return {
      link,
      store: new RedisTokenStore<Record<string, unknown>>({ link, kind: 'session', app: 'app', masterKey }),
    };
  }

  /** Every key under a prefix, with its value and time to live (ms). */
  async function keysUnder(prefix: string): Promise<Array<{ key: string; value: string | null; ttl: number }>> {
    const keys = await raw.run((client) => client.keys(`${prefix}*`));
    return Promise.all(
      keys.map(async (key) => ({
        key,
        value: await raw.run((client) => client.get(key)),
        ttl: await raw.run((client) => client.pTTL(key)),
      })),
    );
  }

  it("Redis holds no id, no plaintext token and no claim; every key has a TTL at the record's expiry", async () => {
    const { link, store } = await storeWith();
    const expiresAt = later();
    await store.put(
      'session-id-marker',
      { accessToken: 'token-plaintext-marker', name: 'Zoë claim-marker' },
      expiresAt,
    );
    const keys = await keysUnder(link.prefix);
    expect(keys).to.have.length(1);
    const [record] = keys;
    expect(record!.key).not.to.include('session-id-marker');
    expect(record!.value).not.to.include('token-plaintext-marker');
    // A marker long enough that sealed bytes cannot hold it by chance (two letters could).
    expect(record!.value).not.to.include('claim-marker');
    expect(record!.ttl).to.be.within(3_590_000, 3_600_000);
    expect(await store.get('session-id-marker')).to.deep.equal({
      accessToken: 'token-plaintext-marker',
      name: 'Zoë claim-marker',
    });
  });

  it('a record moved to another key, or with its expiry edited, does not open and counts as absent', async () => {
    const { link, store } = await storeWith();
    await store.put('one', { v: 1 }, later());
    await store.put('two', { v: 2 }, later());
    const [first, second] = await keysUnder(link.prefix);
    await raw.run((client) => client.set(second!.key, first!.value!));
    const edited = JSON.parse(first!.value!) as { expiresAt: number };
    edited.expiresAt += 86_400_000;
    await raw.run((client) => client.set(first!.key, JSON.stringify(edited)));
    expect(await store.get('one')).to.equal(undefined);
    expect(await store.get('two')).to.equal(undefined);
  });

  it('another app on the same prefix cannot read the records', async () => {
    const { link, store } = await storeWith();
    await store.put('s', { v: 1 }, later());
    const other = new RedisTokenStore<Record<string, unknown>>({ link, kind: 'session', app: 'other-app', masterKey });
    expect(await other.get('s')).to.equal(undefined);
  });

  it('a lock has a lease: one left by a vanished holder is taken over once it runs out', async () => {
    const { link, store } = await storeWith();
    let ran = false;
    // A holder that crashed: its lock (any other token) with 300 ms left on the lease.
    await store.exclusive('s', async () => {
      const [lock] = (await keysUnder(link.prefix)).filter(({ key }) => key.endsWith(':lock'));
      expect(lock!.ttl).to.be.within(LOCK_LEASE_MS - 1_000, LOCK_LEASE_MS);
    });
    await store
      .exclusive('s', async () => {
        const [lock] = (await keysUnder(link.prefix)).filter(({ key }) => key.endsWith(':lock'));
        await raw.run((client) =>
          client.set(lock!.key, 'a-vanished-holder', { expiration: { type: 'PX', value: 300 } }),
        );
      })
      .catch(() => undefined); // its own writes are fenced from here: the lock is another's
    const started = Date.now();
    await store.exclusive('s', async () => void (ran = true));
    expect(ran).to.equal(true);
    expect(Date.now() - started).to.be.below(LOCK_LEASE_MS);
  });

  it('fencing: a holder whose lease ran out and whose lock another took cannot write or remove the record', async () => {
    const { link, store } = await storeWith();
    await store.put('s', { v: 'first' }, later());
    let lockKey = '';
    const error = await store
      .exclusive('s', async () => {
        const [lock] = (await keysUnder(link.prefix)).filter(({ key }) => key.endsWith(':lock'));
        lockKey = lock!.key;
        // The lease ran out during a long pause and another instance took the lock and wrote.
        await raw.run((client) =>
          client.set(lock!.key, 'the-next-holder', { expiration: { type: 'PX', value: LOCK_LEASE_MS } }),
        );
        await store.put('s', { v: 'stale' }, later());
      })
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    expect(error).to.be.instanceOf(LockLostError);
    await raw.run((client) => client.del(lockKey)); // the next holder is done
    const deleteError = await store
      .exclusive('s', async () => {
        const [lock] = (await keysUnder(link.prefix)).filter(({ key }) => key.endsWith(':lock'));
        await raw.run((client) =>
          client.set(lock!.key, 'the-next-holder', { expiration: { type: 'PX', value: LOCK_LEASE_MS } }),
        );
        await store.delete('s');
      })
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    expect(deleteError).to.be.instanceOf(LockLostError);
    expect(await store.get('s')).to.deep.equal({ v: 'first' });
  });

  it("another handle's writes and removals are told by name; a handle's own are not told to it", async () => {
    const prefix = `t-${randomBytes(4).toString('hex')}:`;
    const a = await storeWith(prefix);
    const b = await storeWith(prefix);
    const heardByB: Array<string | undefined> = [];
    const heardByA: Array<string | undefined> = [];
    b.store.changes.onChange((name) => heardByB.push(name));
    a.store.changes.onChange((name) => heardByA.push(name));
    await a.store.put('s', { v: 1 }, later());
    await a.store.delete('s');
    for (let i = 0; i < 100 && heardByB.length < 2; i++) await delay(10);
    expect(heardByB).to.deep.equal([a.store.changes.nameOf('s'), a.store.changes.nameOf('s')]);
    expect(b.store.changes.nameOf('s')).to.equal(a.store.changes.nameOf('s'));
    expect(heardByA).to.deep.equal([]);
  });

  it('Redis down: every operation fails at once with StoreUnavailableError (never "absent"); back: they work again', async () => {
    const own = await startRedis();
    try {
      const link = new RedisLink({ url: new URL(own.url), prefix: 'down:', logger: createLogger('silent') });
      opened.push(link);
      expect(await link.open(5_000)).to.equal(true);
      const store = new RedisTokenStore<Record<string, unknown>>({ link, kind: 'session', app: 'app', masterKey });
      await store.put('s', { v: 1 }, later());
      await own.kill();
      for (let i = 0; i < 100 && link.available; i++) await delay(10);
      expect(link.available).to.equal(false);
      expect(store.changes.watching).to.equal(false);
      for (const operation of [
        () => store.get('s'),
        () => store.put('s', { v: 2 }, later()),
        () => store.delete('s'),
        () => store.exclusive('s', async () => 1),
      ]) {
        const error = await operation().then(
          () => undefined,
          (failure: unknown) => failure,
        );
        expect(error).to.be.instanceOf(StoreUnavailableError);
      }
      await own.start();
      for (let i = 0; i < 300 && !(link.available && store.changes.watching); i++) await delay(20);
      expect(await store.get('s')).to.deep.equal({ v: 1 });
    } finally {
      await own.stop();
    }
  });
});

describe('GATEHOUSE_REDIS_URL and the start', () => {
  it('a malformed URL is a startup error naming the variable and never the password', () => {
    for (const text of [
      'not a url',
      'http://h:6379',
      'redis://',
      'redis://u:s3cret-pw@h:6379/99',
      'redis://u:s3cret-pw@h:6379/?tls=1',
    ]) {
      let error: Error | undefined;
      try {
        parseRedisUrl(text);
      } catch (failure) {
        error = failure as Error;
      }
      expect(error, text).to.be.instanceOf(RedisSettingsError);
      expect(error!.message).to.include('GATEHOUSE_REDIS_URL');
      expect(error!.message).not.to.include('s3cret-pw');
    }
    expect(parseRedisUrl('rediss://user:pw@redis.internal:6380/2').host).to.equal('redis.internal:6380');
  });

  it("GATEHOUSE_REDIS_MODE: single (default), cluster or sentinel; several URLs only for a cluster or sentinels; sentinel needs the primary's name", () => {
    expect(redisSettings({})).to.equal(undefined);
    expect(redisSettings({ GATEHOUSE_REDIS_URL: 'redis://h:1' })).to.deep.include({ mode: 'single' });
    expect(
      redisSettings({ GATEHOUSE_REDIS_URL: 'redis://a:1,redis://b:2', GATEHOUSE_REDIS_MODE: 'cluster' })!.urls,
    ).to.have.length(2);
    expect(
      redisSettings({
        GATEHOUSE_REDIS_URL: 'redis://s:26379',
        GATEHOUSE_REDIS_MODE: 'sentinel',
        GATEHOUSE_REDIS_SENTINEL_NAME: 'main',
      }),
    ).to.deep.include({ mode: 'sentinel', sentinelName: 'main' });
    for (const [env, message] of [
      [
        { GATEHOUSE_REDIS_URL: 'redis://h:1', GATEHOUSE_REDIS_MODE: 'replicated' },
        /GATEHOUSE_REDIS_MODE must be single, cluster or sentinel/,
      ],
      [
        { GATEHOUSE_REDIS_URL: 'redis://a:1,redis://u:s3cret-pw@b:2' },
        /names 2 servers.*GATEHOUSE_REDIS_MODE=cluster or sentinel/,
      ],
      [{ GATEHOUSE_REDIS_URL: 'redis://a:1,redis://b:2/3', GATEHOUSE_REDIS_MODE: 'cluster' }, /only database 0/],
      [
        { GATEHOUSE_REDIS_URL: 'redis://s:26379', GATEHOUSE_REDIS_MODE: 'sentinel' },
        /needs GATEHOUSE_REDIS_SENTINEL_NAME/,
      ],
      [
        { GATEHOUSE_REDIS_URL: 'redis://a:1,http://u:s3cret-pw@b:2', GATEHOUSE_REDIS_MODE: 'cluster' },
        /must start with redis:\/\/ or rediss:\/\//,
      ],
    ] as const) {
      let error: Error | undefined;
      try {
        redisSettings(env);
      } catch (failure) {
        error = failure as Error;
      }
      expect(error, JSON.stringify(env)).to.be.instanceOf(RedisSettingsError);
      expect(error!.message).to.match(message);
      expect(error!.message).not.to.include('s3cret-pw');
    }
  });

  it('without an encryption key in the environment, a start with Redis fails and says to set one', async () => {
    const config = resolveAuthConfig(
      {
        identityProviders: {
          customOpenIdConnectProviders: {
            corp: {
              registration: {
                clientId: 'c',
                openIdConnectConfiguration: {
                  wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
                },
              },
            },
          },
        },
      },
      {},
    ).config;
    const error = await startAuthRuntime({
      headers: fallbackCore,
      config,
      logger: createLogger('silent'),
      env: { GATEHOUSE_REDIS_URL: 'redis://127.0.0.1:1' },
    }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error).to.be.instanceOf(RedisSettingsError);
    expect(error!.message).to.match(/GATEHOUSE_ENCRYPTION_KEY/);
  });

  it('a Redis that cannot be reached at start is a warning naming the variable (not the password); the start goes on and protected requests answer 503', async () => {
    const logs = capturingLogger();
    const config = resolveAuthConfig(
      {
        identityProviders: {
          customOpenIdConnectProviders: {
            corp: {
              registration: {
                clientId: 'c',
                openIdConnectConfiguration: {
                  wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
                },
              },
            },
          },
        },
      },
      {},
    ).config;
    const masterKey = randomBytes(32);
    const runtime = await startAuthRuntime({
      headers: fallbackCore,
      config,
      logger: logs.logger,
      env: {
        GATEHOUSE_REDIS_URL: 'redis://user:s3cret-pw@127.0.0.1:1',
        GATEHOUSE_ENCRYPTION_KEY: masterKey.toString('hex'),
      },
    });
    try {
      const warning = logs.lines().find((line) => line.level === 40 && /GATEHOUSE_REDIS_URL/.test(String(line.msg)));
      expect(warning, logs.raw()).not.to.equal(undefined);
      expect(logs.raw()).not.to.include('s3cret-pw');
      // A validly signed session cookie: its record must be looked up, and cannot be.
      const cookie = signSessionId(deriveKey(masterKey, 'session-cookie', config.app), newSessionId());
      const view: RequestView = {
        method: 'GET',
        path: '/private',
        query: '',
        headers: [
          ['host', 'app.example'],
          ['cookie', `PlatformAuthSession=${cookie}`],
        ],
        scheme: 'https',
        host: 'app.example',
        remoteAddress: '127.0.0.1',
        readBody: async () => Buffer.alloc(0),
      };
      const decision = await runtime.layer.decide(view);
      expect(decision.kind, JSON.stringify(decision)).to.equal('respond');
      expect(decision.kind === 'respond' && decision.status, JSON.stringify(decision)).to.equal(503);
    } finally {
      await runtime.close();
    }
  });
});

for (const [name, start] of [
  ['a single redis-server', startRedisSingle],
  ['a Redis Cluster of three primaries', startRedisCluster],
  ['a primary found through Redis Sentinel', startRedisSentinel],
] as const) {
  describe(`RedisTokenStore on ${name} (real redis-server processes)`, function () {
    this.timeout(60_000);
    let topology: TestTopology;
    const links: RedisLink[] = [];

    before(async () => {
      topology = await start();
    });
    after(async () => {
      await Promise.all(links.map((link) => link.close()));
      await topology?.stop();
    });

    async function link(prefix: string): Promise<RedisLink> {
      const opened = new RedisLink({ settings: redisSettings(topology.env)!, prefix, logger: createLogger('silent') });
      links.push(opened);
      expect(await opened.open(10_000)).to.equal(true);
      return opened;
    }

    tokenStoreConformance(`RedisTokenStore, ${name}`, async () => {
      let now = 1_800_000_000_000;
      const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
      const prefix = `conformance-${randomBytes(6).toString('hex')}:`;
      const masterKey = randomBytes(32);
      const open = async () =>
        new RedisTokenStore<Record<string, unknown>>({
          link: await link(prefix),
          kind: 'session',
          app: 'conformance',
          masterKey,
          now: clock.now,
        });
      const store = await open();
      const peer = await open();
      return { store, peer: () => peer, ...clock };
    });

    it("another handle's writes are told to it by name", async () => {
      const prefix = `notices-${randomBytes(4).toString('hex')}:`;
      const masterKey = randomBytes(32);
      const [a, b] = [await link(prefix), await link(prefix)].map(
        (opened) =>
          new RedisTokenStore<Record<string, unknown>>({ link: opened, kind: 'session', app: 'app', masterKey }),
      );
      const heard: Array<string | undefined> = [];
      b!.changes.onChange((changed) => heard.push(changed));
      await a!.put('s', { v: 1 }, Date.now() + 60_000);
      for (let i = 0; i < 200 && heard.length === 0; i++) await delay(10);
      expect(heard).to.deep.equal([a!.changes.nameOf('s')]);
      expect(await b!.get('s')).to.deep.equal({ v: 1 });
    });
  });
}
