// The auth layer with identity assertions on: the header is one more edit of a signed-in forward,
// and keys that cannot be had (their store is down) fail closed as sessions do.
import { randomBytes } from 'node:crypto';

import { expect } from 'chai';

import type { AssertionKeyRing } from '../../../src/core/assertion/key-ring.js';
import { AuthLayer } from '../../../src/core/auth-layer.js';
import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import { deriveKey } from '../../../src/core/crypto/keys.js';
import { newSessionId, signSessionId } from '../../../src/core/crypto/session-id.js';
import type { RequestView } from '../../../src/core/http/request-view.js';
import type { SessionRecord } from '../../../src/core/session/record.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';
import { StoreUnavailableError } from '../../../src/core/token-store/token-store.js';
import { fallbackCore } from '../../../src/native/index.js';
import { createLogger } from '../../../src/logging.js';
import { corpDocument, corpSession } from '../../support/session-fixture.js';

const HOST = 'app.example';
const HEADER = 'X-PLATFORM-CLIENT-PRINCIPAL-ASSERTION';

const downRing: AssertionKeyRing = {
  signingKey: () => Promise.reject(new StoreUnavailableError('redis is down')),
  publishedKeys: () => Promise.reject(new StoreUnavailableError('redis is down')),
};

async function signedInLayer(assertionKeys?: AssertionKeyRing) {
  const { config } = resolveAuthConfig(
    { ...corpDocument, globalValidation: { excludedPaths: ['/public/*'] }, gatehouse: { identityAssertion: {} } },
    {},
  );
  const masterKey = randomBytes(32);
  const store = new MemoryTokenStore<SessionRecord>();
  const id = newSessionId();
  const record = corpSession(Date.now(), { configFingerprint: config.providers.get('corp')!.fingerprint, host: HOST });
  await store.put(id, record, record.expiresAt);
  const layer = new AuthLayer({
    config,
    store,
    masterKey,
    headers: fallbackCore,
    logger: createLogger('silent'),
    ...(assertionKeys ? { assertionKeys } : {}),
  });
  const cookie = `PlatformAuthSession=${signSessionId(deriveKey(masterKey, 'session-cookie', config.app), id)}`;
  return { layer, cookie };
}

function request(path: string, headers: Array<[string, string]> = []): RequestView {
  return {
    method: 'GET',
    path,
    query: '',
    headers: [['Host', HOST], ['Accept', 'application/json'], ...headers],
    scheme: 'https',
    host: HOST,
    remoteAddress: '127.0.0.1',
    readBody: async () => Buffer.alloc(0),
  };
}

describe('auth layer with identity assertions', () => {
  it('a signed-in forward sets the assertion with the identity headers; an anonymous one none', async () => {
    const { layer, cookie } = await signedInLayer();
    const signedIn = await layer.decide(request('/orders', [['Cookie', cookie]]));
    if (signedIn.kind !== 'forward') throw new Error(`answered ${signedIn.status}`);
    expect(signedIn.edits.set.filter(([name]) => name === HEADER)).to.have.length(1);
    const anonymous = await layer.decide(request('/public/a', [[HEADER, 'forged']]));
    if (anonymous.kind !== 'forward') throw new Error('answered');
    expect(anonymous.edits.set).to.deep.equal([]);
    expect(anonymous.edits.remove).to.include(HEADER.toLowerCase());
  });

  it('keys that cannot be had: a protected request is a 503, an excluded path goes on anonymously, /.auth/keys a 503', async () => {
    const { layer, cookie } = await signedInLayer(downRing);
    const refused = await layer.decide(request('/orders', [['Cookie', cookie]]));
    expect(refused.kind).to.equal('respond');
    if (refused.kind !== 'respond') throw new Error('forwarded');
    expect(refused.status).to.equal(503);
    expect(refused.headers['Retry-After']).to.equal('5');
    const excluded = await layer.decide(request('/public/a', [['Cookie', cookie]]));
    if (excluded.kind !== 'forward') throw new Error('answered');
    expect(excluded.identity).to.equal(null);
    expect(excluded.edits.set).to.deep.equal([]);
    const keys = await layer.decide(request('/.auth/keys'));
    expect(keys.kind === 'respond' && keys.status).to.equal(503);
  });
});
