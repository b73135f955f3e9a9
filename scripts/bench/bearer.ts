// Bearer validation through gatehouse (AuthLayer.decide on a request with
// `Authorization: Bearer`, in process) against a bare jose jwtVerify with the
// same key set, same run: on a cache miss (the validated-token cache off) and
// on a cache hit (the same token again). Two load shapes: batches of 32 awaited
// together, and 32 kept in flight (each completion starts the next), where the
// event loop never waits for the pool and is the only bottleneck.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { createLocalJWKSet, exportJWK, jwtVerify, SignJWT, type JWK } from 'jose';

import { AuthLayer } from '../../dist/core/auth-layer.js';
import { resolveAuthConfig } from '../../dist/core/config/auth-config.js';
import type { RequestView } from '../../dist/core/http/request-view.js';
import type { SessionRecord } from '../../dist/core/session/record.js';
import { MemoryTokenStore } from '../../dist/core/token-store/memory.js';
import { createLogger } from '../../dist/logging.js';
import { formatRate, interleavedRates, keepInFlight, table } from './measure.js';

const CONCURRENCY = 32;
/** Validations per in-flight run: long enough that the drain at its end hardly counts. */
const IN_FLIGHT_RUN = 512;

export interface BearerFixture {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly token: string;
  readonly jwks: { keys: JWK[] };
  close(): Promise<void>;
}

/** A JWKS endpoint on loopback and a token signed by its key (RS256, what most providers use). */
export async function bearerFixture(audience: string): Promise<BearerFixture> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'bench-key', alg: 'RS256', use: 'sig' }] };
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks)));
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = await new SignJWT({ name: 'Bench User', preferred_username: 'bench@example.com' })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench-key' })
    .setIssuer(origin)
    .setAudience(audience)
    .setSubject('bench-user')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);
  return { issuer: origin, jwksUri: `${origin}/keys`, token, jwks, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The authsettingsV2 document of a provider whose bearer tokens the fixture signs. */
export function bearerDocument(fixture: BearerFixture, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    identityProviders: {
      customOpenIdConnectProviders: {
        bench: {
          registration: {
            clientId: 'bench',
            openIdConnectConfiguration: { authorizationEndpoint: `${fixture.issuer}/authorize`, tokenEndpoint: `${fixture.issuer}/token`, issuer: fixture.issuer, certificationUri: fixture.jwksUri },
          },
        },
      },
    },
    ...extra,
  };
}

export async function benchBearer(quick: boolean): Promise<string> {
  const fixture = await bearerFixture('bench');
  try {
    const { config } = resolveAuthConfig(bearerDocument(fixture), {});
    const layer = (bearerCacheMax?: number) =>
      new AuthLayer({ config, store: new MemoryTokenStore<SessionRecord>(), masterKey: randomBytes(32), logger: createLogger('silent'), ...(bearerCacheMax !== undefined ? { bearerCacheMax } : {}) });
    const cached = layer();
    const uncached = layer(0);
    const view: RequestView = {
      method: 'GET',
      path: '/api/orders',
      query: '',
      headers: [
        ['Host', '127.0.0.1:8080'],
        ['Authorization', `Bearer ${fixture.token}`],
        ['Accept', 'application/json'],
      ],
      scheme: 'http',
      host: '127.0.0.1:8080',
      remoteAddress: '127.0.0.1',
      readBody: async () => Buffer.alloc(0),
    };
    const keySet = createLocalJWKSet(fixture.jwks);
    const bare = () => jwtVerify(fixture.token, keySet, { issuer: fixture.issuer, audience: 'bench', algorithms: ['RS256'] });
    for (const l of [cached, uncached]) {
      const decision = await l.decide(view);
      if (decision.kind !== 'forward' || decision.identity?.userId !== 'bench-user') throw new Error('gatehouse did not accept the bench token');
    }
    await bare();
    // A server validates many requests at once (signature checks run on libuv's pool): the same
    // CONCURRENCY concurrent validations for the baseline and gatehouse alike, in two shapes.
    const batch = (run: () => Promise<unknown>) => () => Promise.all(Array.from({ length: CONCURRENCY }, run));
    const inFlight = (run: () => Promise<unknown>) => () => keepInFlight(run, CONCURRENCY, IN_FLIGHT_RUN);
    const targets = [bare, () => uncached.decide(view), () => cached.decide(view)];
    const rates = await interleavedRates(
      [
        ...targets.map((run, i) => ({ name: `batch ${i}`, run: batch(run), async: true })),
        ...targets.map((run, i) => ({ name: `in flight ${i}`, run: inFlight(run), async: true })),
      ],
      quick ? 3000 : 12000,
    );
    const batched = rates.slice(0, 3).map((rate) => rate * CONCURRENCY);
    const flowing = rates.slice(3).map((rate) => rate * IN_FLIGHT_RUN);
    const cells = (i: number) => [formatRate(batched[i]!), `${(batched[i]! / batched[0]!).toFixed(2)}×`, formatRate(flowing[i]!), `${(flowing[i]! / flowing[0]!).toFixed(2)}×`];
    return table(
      [`RS256 bearer token, in process, ${CONCURRENCY} concurrent`, 'batches: validations/s', 'vs jwtVerify', 'kept in flight: validations/s', 'vs jwtVerify'],
      [
        ['bare jose jwtVerify, same key set (baseline)', ...cells(0)],
        ['gatehouse decide(), cache miss (cache off)', ...cells(1)],
        ['gatehouse decide(), cache hit', ...cells(2)],
      ],
    );
  } finally {
    await fixture.close();
  }
}
