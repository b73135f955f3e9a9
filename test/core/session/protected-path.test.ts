// A protected request's session through the lifecycle table, as the auth layer takes it: each
// outcome below is the effect of the transition the facts pick (session/lifecycle.ts).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

import { expect } from 'chai';

import { AuthLayer } from '../../../src/core/auth-layer.js';
import { resolveAuthConfig, type AuthConfig } from '../../../src/core/config/auth-config.js';
import { deriveKey } from '../../../src/core/crypto/keys.js';
import { newSessionId, signSessionId } from '../../../src/core/crypto/session-id.js';
import type { Decision, RequestView } from '../../../src/core/http/request-view.js';
import type { SessionRecord } from '../../../src/core/session/record.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';
import { AuthenticationTokens } from '../../../src/core/tokens/authentication-token.js';
import { fallbackCore } from '../../../src/native/index.js';
import { createLogger } from '../../../src/logging.js';
import { corpSession } from '../../support/session-fixture.js';

const HOST = 'app.example';
const MINUTE = 60_000;

/** A loopback port nothing listens on: the provider cannot be reached there. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Setup {
  readonly layer: AuthLayer;
  readonly store: MemoryTokenStore<SessionRecord>;
  readonly config: AuthConfig;
  readonly masterKey: Buffer;
}

async function setup(): Promise<Setup> {
  const issuer = `http://127.0.0.1:${await closedPort()}`;
  const { config } = resolveAuthConfig(
    {
      identityProviders: {
        customOpenIdConnectProviders: {
          corp: {
            registration: {
              clientId: 'c',
              openIdConnectConfiguration: {
                wellKnownOpenIdConfiguration: `${issuer}/.well-known/openid-configuration`,
              },
            },
          },
        },
      },
    },
    {},
  );
  const masterKey = randomBytes(32);
  const store = new MemoryTokenStore<SessionRecord>();
  const layer = new AuthLayer({ config, store, masterKey, headers: fallbackCore, logger: createLogger('silent') });
  return { layer, store, config, masterKey };
}

/** A stored session under `setup`'s provider; its cookie header. */
async function session({ store, config, masterKey }: Setup, changes: Partial<SessionRecord>) {
  const id = newSessionId();
  const record = corpSession(Date.now(), {
    configFingerprint: config.providers.get('corp')!.fingerprint,
    host: HOST,
    ...changes,
  });
  await store.put(id, record, record.expiresAt + 3_600_000);
  const cookie = `PlatformAuthSession=${signSessionId(deriveKey(masterKey, 'session-cookie', config.app), id)}`;
  return { id, record, cookie };
}

function request(headers: Array<[string, string]> = []): RequestView {
  return {
    method: 'GET',
    path: '/orders',
    query: '',
    headers: [['Host', HOST], ['Accept', 'application/json'], ...headers],
    scheme: 'https',
    host: HOST,
    remoteAddress: '127.0.0.1',
    readBody: async () => Buffer.alloc(0),
  };
}

function cleared(decision: Decision): boolean {
  if (decision.kind !== 'respond') return false;
  const cookies = [decision.headers['Set-Cookie'] ?? []].flat();
  return cookies.some((cookie) => cookie.startsWith('PlatformAuthSession=;'));
}

describe('the protected path walks the lifecycle table', () => {
  it('AuthenticatedSession --sessionChecked--> AccessTokenValid: forwarded with the identity', async () => {
    const s = await setup();
    const { cookie } = await session(s, {});
    const decision = await s.layer.decide(request([['Cookie', cookie]]));
    expect(decision.kind).to.equal('forward');
    if (decision.kind === 'forward') expect(decision.identity?.userId).to.equal('u');
  });

  it('Unauthenticated --protectedRequest--> Challenged: 401; an invalid cookie is cleared, none is not', async () => {
    const s = await setup();
    const none = await s.layer.decide(request());
    expect(none).to.include({ kind: 'respond', status: 401 });
    expect(cleared(none)).to.equal(false);
    const forged = `PlatformAuthSession=${signSessionId(randomBytes(32), newSessionId())}`;
    const invalid = await s.layer.decide(request([['Cookie', forged]]));
    expect(invalid).to.include({ kind: 'respond', status: 401 });
    expect(cleared(invalid)).to.equal(true);
  });

  it('--refreshDeferred--> AccessTokenValid: the provider cannot be reached and the token is still valid', async () => {
    const s = await setup();
    const tokens = { accessToken: 'a', refreshToken: 'r', accessTokenExpiresAt: Date.now() + MINUTE };
    const { id, cookie } = await session(s, { tokens });
    const decision = await s.layer.decide(request([['Cookie', cookie]]));
    expect(decision.kind).to.equal('forward');
    expect((await s.store.get(id))?.tokens).to.deep.equal(tokens); // kept as it was, refreshed next time
  });

  it('--refreshFailed--> ReauthRequired (deleteSession) --nextRequest--> Challenged: the token has run out', async () => {
    const s = await setup();
    const tokens = { accessToken: 'a', refreshToken: 'r', accessTokenExpiresAt: Date.now() - MINUTE };
    const { id, cookie } = await session(s, { tokens });
    const decision = await s.layer.decide(request([['Cookie', cookie]]));
    expect(decision).to.include({ kind: 'respond', status: 401 });
    expect(cleared(decision)).to.equal(true);
    expect(await s.store.get(id)).to.equal(undefined);
  });

  it('--sessionInvalidated--> ReauthRequired: a record of another host is deleted, a lapsed one kept for its extension', async () => {
    const s = await setup();
    const elsewhere = await session(s, { host: 'staging.example' });
    const moved = await s.layer.decide(request([['Cookie', elsewhere.cookie]]));
    expect(moved).to.include({ kind: 'respond', status: 401 });
    expect(cleared(moved)).to.equal(true);
    expect(await s.store.get(elsewhere.id)).to.equal(undefined);

    const lapsed = await session(s, { expiresAt: Date.now() - MINUTE });
    const over = await s.layer.decide(request([['Cookie', lapsed.cookie]]));
    expect(over).to.include({ kind: 'respond', status: 401 });
    expect(cleared(over)).to.equal(true);
    expect(await s.store.get(lapsed.id)).not.to.equal(undefined);
  });

  it('an authentication token whose session ended is told so, not sent to sign in', async () => {
    const s = await setup();
    const { id, record } = await session(s, { host: 'staging.example' });
    const tokens = new AuthenticationTokens(deriveKey(s.masterKey, 'authentication-token', s.config.app), s.config.app);
    const token = await tokens.issue(id, { userId: 'u', provider: 'corp', expiresAt: record.expiresAt });
    const decision = await s.layer.decide(request([['X-ZUMO-AUTH', token]]));
    expect(decision).to.include({ kind: 'respond', status: 401 });
    if (decision.kind !== 'respond') throw new Error('forwarded');
    expect(String(decision.headers['WWW-Authenticate'])).to.include('session ended');
    expect(cleared(decision)).to.equal(false);
    expect(await s.store.get(id)).to.equal(undefined);
  });
});
