// Bearer validation through gatehouse (AuthLayer.decide on a request with
// `Authorization: Bearer`, in process) against a bare jose jwtVerify with the
// same key set, same run: on a cache miss (tokens the validated-token cache
// does not hold, so the miss pays for the lookup and the insertion as in a
// server), with the cache off, and on a cache hit (the same token again). Two load shapes: batches of 32 awaited
// together, and 32 kept in flight (each completion starts the next), where the
// event loop never waits for the pool and is the only bottleneck.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { createLocalJWKSet, exportJWK, jwtVerify, SignJWT, type JWK } from 'jose';

import { AuthLayer } from '../../dist/core/auth-layer.js';
import { loadAddonCore } from '../../dist/native/index.js';
import { resolveAuthConfig } from '../../dist/core/config/auth-config.js';
import { generateRsaKeyPair } from '../../dist/dev/rsa-key-pair.js';
import type { RequestView } from '../../dist/core/http/request-view.js';
import type { SessionRecord } from '../../dist/core/session/record.js';
import { MemoryTokenStore } from '../../dist/core/token-store/memory.js';
import { createLogger } from '../../dist/logging.js';
import { formatRate, interleavedMeasure, keepInFlight, table } from './measure.js';

/** The shared core the layer's header policy is built on, as gatehouse runs it. */
const benchCore = loadAddonCore();

const CONCURRENCY = 32;
/** Validations per in-flight run: long enough that the drain at its end hardly counts. */
const IN_FLIGHT_RUN = 512;
/**
 * The miss rows cycle through this many distinct tokens with a cache of
 * MISS_CACHE_MAX: a token comes back only after DISTINCT_TOKENS - 1 others were
 * inserted after it (far more than the cache holds, whatever order the 32 in
 * flight complete in), so every lookup misses and every insertion evicts.
 */
const DISTINCT_TOKENS = 256;
const MISS_CACHE_MAX = 16;

export interface BearerFixture {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly token: string;
  /** Further tokens of the same user and key, each distinct (own `jti`); `tokens[0]` is `token`. */
  readonly tokens: readonly string[];
  readonly jwks: { keys: JWK[] };
  close(): Promise<void>;
}

/** A JWKS endpoint on loopback and `count` tokens signed by its key (RS256, what most providers use). */
export async function bearerFixture(audience: string, count = 1): Promise<BearerFixture> {
  const { privateKey, publicKey } = generateRsaKeyPair(); // exported as JWK: see rsa-key-pair.ts
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'bench-key', alg: 'RS256', use: 'sig' }] };
  const server = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks)),
  );
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tokens = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      new SignJWT({ name: 'Bench User', preferred_username: 'bench@example.com' })
        .setProtectedHeader({ alg: 'RS256', kid: 'bench-key' })
        .setIssuer(origin)
        .setAudience(audience)
        .setSubject('bench-user')
        .setJti(`bench-${i}`)
        .setIssuedAt()
        .setExpirationTime('2h')
        .sign(privateKey),
    ),
  );
  return {
    issuer: origin,
    jwksUri: `${origin}/keys`,
    token: tokens[0]!,
    tokens,
    jwks,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The authsettingsV2 document of a provider whose bearer tokens the fixture signs. */
export function bearerDocument(fixture: BearerFixture, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    identityProviders: {
      customOpenIdConnectProviders: {
        bench: {
          registration: {
            clientId: 'bench',
            openIdConnectConfiguration: {
              authorizationEndpoint: `${fixture.issuer}/authorize`,
              tokenEndpoint: `${fixture.issuer}/token`,
              issuer: fixture.issuer,
              certificationUri: fixture.jwksUri,
            },
          },
        },
      },
    },
    ...extra,
  };
}

export async function benchBearer(quick: boolean): Promise<string> {
  const fixture = await bearerFixture('bench', DISTINCT_TOKENS);
  try {
    const { config } = resolveAuthConfig(bearerDocument(fixture), {});
    const layer = (bearerCacheMax?: number) =>
      new AuthLayer({
        headers: benchCore,
        config,
        store: new MemoryTokenStore<SessionRecord>(),
        masterKey: randomBytes(32),
        logger: createLogger('silent'),
        ...(bearerCacheMax !== undefined ? { bearerCacheMax } : {}),
      });
    const cached = layer();
    const missing = layer(MISS_CACHE_MAX);
    const uncached = layer(0);
    const view = (token: string): RequestView => ({
      method: 'GET',
      path: '/api/orders',
      query: '',
      headers: [
        ['Host', '127.0.0.1:8080'],
        ['Authorization', `Bearer ${token}`],
        ['Accept', 'application/json'],
      ],
      scheme: 'http',
      host: '127.0.0.1:8080',
      remoteAddress: '127.0.0.1',
      readBody: async () => Buffer.alloc(0),
    });
    // Built beforehand: the rows time validation, not building a request.
    const views = fixture.tokens.map(view);
    const keySet = createLocalJWKSet(fixture.jwks);
    let next = 0;
    // The baseline and both miss rows take the tokens in turn; the hit row repeats the first.
    const nextToken = () => fixture.tokens[next++ % DISTINCT_TOKENS]!;
    const nextView = () => views[next++ % DISTINCT_TOKENS]!;
    const bare = () =>
      jwtVerify(nextToken(), keySet, { issuer: fixture.issuer, audience: 'bench', algorithms: ['RS256'] });
    for (const l of [cached, missing, uncached]) {
      const decision = await l.decide(views[0]!);
      if (decision.kind !== 'forward' || decision.identity?.userId !== 'bench-user')
        throw new Error('gatehouse did not accept the bench token');
    }
    await bare();
    // A server validates many requests at once (signature checks run on libuv's pool): the same
    // CONCURRENCY concurrent validations for the baseline and gatehouse alike, in two shapes.
    const batch = (run: () => Promise<unknown>) => () => Promise.all(Array.from({ length: CONCURRENCY }, run));
    const inFlight = (run: () => Promise<unknown>) => () => keepInFlight(run, CONCURRENCY, IN_FLIGHT_RUN);
    const targets = [
      bare,
      () => missing.decide(nextView()),
      () => uncached.decide(nextView()),
      () => cached.decide(views[0]!),
    ];
    const { rates, threadCpuNsPerRun } = await interleavedMeasure(
      [
        ...targets.map((run, i) => ({ name: `batch ${i}`, run: batch(run), async: true })),
        ...targets.map((run, i) => ({ name: `in flight ${i}`, run: inFlight(run), async: true })),
      ],
      quick ? 3000 : 12000,
    );
    const batched = rates.slice(0, targets.length).map((rate) => rate * CONCURRENCY);
    const flowing = rates.slice(targets.length).map((rate) => rate * IN_FLIGHT_RUN);
    // What each validation costs the event loop itself, kept in flight: the rates above also
    // depend on how the scheduler shares two CPUs between the event loop and libuv's pool.
    const eventLoopMicros = threadCpuNsPerRun?.slice(targets.length).map((ns) => ns / 1000 / IN_FLIGHT_RUN);
    const cpuCells = (i: number) =>
      eventLoopMicros === undefined
        ? ['n/a', 'n/a']
        : [`${eventLoopMicros[i]!.toFixed(1)} µs`, `${(eventLoopMicros[0]! / eventLoopMicros[i]!).toFixed(2)}×`];
    const cells = (i: number) => [
      formatRate(batched[i]!),
      `${(batched[i]! / batched[0]!).toFixed(2)}×`,
      formatRate(flowing[i]!),
      `${(flowing[i]! / flowing[0]!).toFixed(2)}×`,
      ...cpuCells(i),
    ];
    return table(
      [
        `RS256 bearer token, in process, ${CONCURRENCY} concurrent`,
        'batches: validations/s',
        'vs jwtVerify',
        'kept in flight: validations/s',
        'vs jwtVerify',
        'event-loop CPU per validation',
        'vs jwtVerify',
      ],
      [
        ['bare jose jwtVerify, same key set (baseline)', ...cells(0)],
        [`gatehouse decide(), cache miss (${DISTINCT_TOKENS} tokens, cache of ${MISS_CACHE_MAX})`, ...cells(1)],
        ['gatehouse decide(), cache off', ...cells(2)],
        ['gatehouse decide(), cache hit', ...cells(3)],
      ],
    );
  } finally {
    await fixture.close();
  }
}
