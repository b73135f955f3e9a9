// Two instances sharing a real redis-server sign identity assertions with the same keys, and rotate
// them together: an app that caches the key set it fetched from either instance accepts every
// assertion either one signed while it is valid, across rotations.
import { randomBytes } from 'node:crypto';

import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';

import {
  JWKS_MAX_AGE_SECONDS,
  KEY_RING_ID,
  PUBLISH_LEAD_MS,
  SIGNING_PERIOD_MS,
  StoredAssertionKeyRing,
  type StoredKeyRing,
} from '../../../src/core/assertion/key-ring.js';
import { IdentityAssertions } from '../../../src/core/assertion/signer.js';
import { startAuthRuntime } from '../../../src/core/auth-runtime.js';
import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import { fallbackCore } from '../../../src/native/index.js';
import type { Identity } from '../../../src/core/identity.js';
import { createLogger } from '../../../src/logging.js';
import { RedisLink } from '../../../src/core/token-store/redis-link.js';
import { RedisTokenStore } from '../../../src/core/token-store/redis.js';
import { startRedis, type TestRedis } from '../../support/redis-server.js';

const LIFETIME = 5 * 60_000;
const ORIGIN = { scheme: 'https', host: 'app.example.com' } as const;

const caller: Identity = {
  provider: 'corp',
  userId: 'user-1',
  userName: 'Ada',
  authType: 'corp',
  nameType: 'name',
  roleType: 'roles',
  claims: [],
  tokens: { accessToken: 'secret-access-token' },
};

describe('identity assertion keys shared by two instances through redis-server', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  const links: RedisLink[] = [];
  const masterKey = randomBytes(32);

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await Promise.all(links.map((link) => link.close()));
    await redis?.stop();
  });

  async function instance(prefix: string, now: () => number) {
    const link = new RedisLink({
      url: new URL(redis.url),
      prefix,
      logger: createLogger('silent'),
      commandTimeoutMs: 2000,
    });
    links.push(link);
    expect(await link.open(5_000)).to.equal(true);
    const store = new RedisTokenStore<StoredKeyRing>({ link, kind: 'assertionkeys', app: 'default', masterKey });
    const ring = new StoredAssertionKeyRing({ store, lifetimeMs: LIFETIME, now });
    const signer = new IdentityAssertions({
      ring,
      settings: { audience: undefined, lifetimeMs: LIFETIME },
      headerPrefix: 'X-PLATFORM-',
      now,
    });
    return { link, store, ring, signer };
  }

  it('two gatehouse instances given the same GATEHOUSE_REDIS_URL publish the same keys', async () => {
    const { config } = resolveAuthConfig(
      {
        identityProviders: {
          customOpenIdConnectProviders: {
            corp: {
              registration: {
                clientId: 'c',
                openIdConnectConfiguration: {
                  authorizationEndpoint: 'http://127.0.0.1:9/a',
                  tokenEndpoint: 'http://127.0.0.1:9/t',
                  issuer: 'http://127.0.0.1:9',
                  certificationUri: 'http://127.0.0.1:9/k',
                },
              },
            },
          },
        },
        gatehouse: { identityAssertion: {} },
      },
      {},
    );
    const env = {
      GATEHOUSE_REDIS_URL: redis.url,
      GATEHOUSE_ENCRYPTION_KEY: masterKey.toString('hex'),
      GATEHOUSE_REDIS_KEY_PREFIX: `i-${randomBytes(4).toString('hex')}:`,
    };
    const published = [];
    for (let i = 0; i < 2; i++) {
      const runtime = await startAuthRuntime({ headers: fallbackCore, config, logger: createLogger('silent'), env });
      try {
        const answer = await runtime.layer.decide({
          method: 'GET',
          path: '/.auth/keys',
          query: '',
          headers: [['Host', 'app.example.com']],
          scheme: 'https',
          host: 'app.example.com',
          remoteAddress: '127.0.0.1',
          readBody: async () => Buffer.alloc(0),
        });
        if (answer.kind !== 'respond' || answer.status !== 200) throw new Error('no keys');
        published.push(JSON.parse(answer.body!.toString()) as { keys: JWK[] });
      } finally {
        await runtime.close();
      }
    }
    expect(published[0]!.keys).to.have.length(1);
    expect(published[1]).to.deep.equal(published[0]);
  });

  it('both sign with one key, kept sealed in Redis', async () => {
    const prefix = `a-${randomBytes(4).toString('hex')}:`;
    const a = await instance(prefix, Date.now);
    const b = await instance(prefix, Date.now);
    const [, fromA] = await a.signer.header(caller, ORIGIN);
    const [, fromB] = await b.signer.header({ ...caller, userId: 'user-2' }, ORIGIN);
    expect(decodeProtectedHeader(fromA).kid).to.equal(decodeProtectedHeader(fromB).kid);
    const ring = (await a.store.get(KEY_RING_ID))!;
    const d = ring.keys[0]!.privateJwk!.d!;
    const values = await a.link.run(async (client) => {
      const keys = await client.keys(`${prefix}*`);
      return Promise.all(keys.map((key) => client.get(key)));
    });
    expect(values).to.have.length(1);
    expect(values[0]).not.to.include(d);
    expect(values[0]).not.to.include(ring.keys[0]!.kid);
  });

  it('across rotations, an app caching either instance key set accepts every valid assertion of both', async () => {
    const prefix = `r-${randomBytes(4).toString('hex')}:`;
    let t = Date.now();
    const now = () => t;
    const instances = [await instance(prefix, now), await instance(prefix, now)];
    // The app's copy of the key set, fetched from the instances in turn and kept for max-age.
    let cached: { keys: JWK[]; until: number } | undefined;
    let fetches = 0;
    const issued: Array<{ jwt: string; exp: number }> = [];
    const kids = new Set<string>();
    const end = t + 3 * SIGNING_PERIOD_MS;
    for (let step = 0; t < end; step++) {
      const here = instances[step % 2]!;
      // Every request is a new sign-in here, so each signs anew.
      const [, jwt] = await here.signer.header({ ...caller, userId: `user-${step}` }, ORIGIN);
      kids.add(decodeProtectedHeader(jwt).kid!);
      issued.push({ jwt, exp: t + LIFETIME });
      if (cached === undefined || t >= cached.until) {
        cached = {
          keys: [...(await instances[fetches++ % 2]!.ring.publishedKeys())],
          until: t + JWKS_MAX_AGE_SECONDS * 1000,
        };
      }
      // An app that has just fetched the key set (a new one, or one whose copy has just expired) too.
      const fresh = [...(await instances[(step + 1) % 2]!.ring.publishedKeys())];
      for (const keys of [cached.keys, fresh])
        for (const assertion of issued.filter((a) => a.exp > t))
          await jwtVerify(assertion.jwt, createLocalJWKSet({ keys }), {
            issuer: 'https://app.example.com',
            audience: 'https://app.example.com',
            algorithms: ['ES256'],
            currentDate: new Date(t),
          });
      // Steps around the schedule's edges: every few minutes near a rotation, hours elsewhere.
      const sinceStart = (t - (end - 3 * SIGNING_PERIOD_MS)) % SIGNING_PERIOD_MS;
      const nearEdge = sinceStart > SIGNING_PERIOD_MS - 8 * PUBLISH_LEAD_MS || sinceStart < 2 * PUBLISH_LEAD_MS;
      t += nearEdge ? 60_000 + (step % 3) * 60_000 : 6 * 3_600_000;
    }
    expect(kids.size).to.be.at.least(3);
  });
});
