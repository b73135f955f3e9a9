// Bearer validation through gatehouse (AuthLayer.decide on a request with
// `Authorization: Bearer`, in process) against a bare jose jwtVerify with the
// same key set, same run: on a cache miss (the validated-token cache off) and
// on a cache hit (the same token again).
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
import { formatRate, interleavedRates, table } from './measure.js';

const BATCH = 32;

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
    // A server validates many requests at once (signature checks run on libuv's pool): batches of
    // BATCH concurrent validations measure throughput, for the baseline and gatehouse alike.
    const batch = (run: () => Promise<unknown>) => () => Promise.all(Array.from({ length: BATCH }, run));
    const [baseline, miss, hit] = (
      await interleavedRates(
        [
          { name: 'bare jwtVerify', run: batch(bare), async: true },
          { name: 'gatehouse, cache miss', run: batch(() => uncached.decide(view)), async: true },
          { name: 'gatehouse, cache hit', run: batch(() => cached.decide(view)), async: true },
        ],
        quick ? 1500 : 6000,
      )
    ).map((rate) => rate * BATCH) as [number, number, number];
    const ratio = (r: number) => `${(r / baseline).toFixed(2)}×`;
    return table(
      [`RS256 bearer token, in process, ${BATCH} at a time`, 'validations/s', 'vs bare jwtVerify'],
      [
        ['bare jose jwtVerify, same key set (baseline)', formatRate(baseline), '1.00×'],
        ['gatehouse decide(), cache miss (cache off)', formatRate(miss), ratio(miss)],
        ['gatehouse decide(), cache hit', formatRate(hit), ratio(hit)],
      ],
    );
  } finally {
    await fixture.close();
  }
}
