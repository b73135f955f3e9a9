// The identity assertion: what it says, what it never carries, and that it is signed once per
// identity and origin and reused until close to its expiry.
import { expect } from 'chai';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';

import {
  StoredAssertionKeyRing,
  type AssertionKeyRing,
  type StoredKeyRing,
} from '../../../src/core/assertion/key-ring.js';
import { IdentityAssertions } from '../../../src/core/assertion/signer.js';
import type { Identity } from '../../../src/core/identity.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';

const LIFETIME = 5 * 60_000;
const ORIGIN = { scheme: 'https', host: 'App.Example.com' } as const;

const TOKENS = {
  accessToken: 'access-token-secret-value',
  idToken: 'id-token-secret-value',
  refreshToken: 'refresh-token-secret-value',
  accessTokenSecret: 'oauth1-secret-value',
  expiresOn: '2026-01-01T00:00:00.000Z',
};

function identity(changes: Partial<Identity> = {}): Identity {
  return {
    provider: 'corp',
    userId: 'user-1',
    userName: 'Ada Lovelace',
    authType: 'corp',
    nameType: 'name',
    roleType: 'roles',
    claims: [
      { typ: 'sub', val: 'user-1' },
      { typ: 'email', val: 'ada@example.com' },
      { typ: 'email_verified', val: 'true' },
      { typ: 'groups', val: 'engineers' },
      { typ: 'groups', val: 'admins' },
      { typ: 'roles', val: 'writer' },
      { typ: 'sid', val: 'provider-session-id' },
    ],
    tokens: TOKENS,
    ...changes,
  };
}

function setup(options: { audience?: string; prefix?: string } = {}) {
  let t = Date.UTC(2026, 0, 1);
  const now = () => t;
  const ring = new StoredAssertionKeyRing({
    store: new MemoryTokenStore<StoredKeyRing>(now),
    lifetimeMs: LIFETIME,
    now,
  });
  let signingKeyCalls = 0;
  const counted: AssertionKeyRing = {
    signingKey: () => (signingKeyCalls++, ring.signingKey()),
    publishedKeys: () => ring.publishedKeys(),
  };
  const assertions = new IdentityAssertions({
    ring: counted,
    settings: { audience: options.audience, lifetimeMs: LIFETIME },
    headerPrefix: options.prefix ?? 'X-PLATFORM-',
    now,
  });
  return {
    assertions,
    ring,
    now,
    advance: (ms: number) => (t += ms),
    signatures: () => signingKeyCalls,
    verify: async (jwt: string, audience: string) =>
      jwtVerify(jwt, createLocalJWKSet({ keys: [...(await ring.publishedKeys())] }), {
        issuer: 'https://app.example.com',
        audience,
        algorithms: ['ES256'],
        currentDate: new Date(t),
      }),
  };
}

describe('identity assertion signer', () => {
  it('names the header after the prefix, canonical', () => {
    expect(setup().assertions.headerName).to.equal('X-PLATFORM-CLIENT-PRINCIPAL-ASSERTION');
    expect(setup({ prefix: 'x_ms_' }).assertions.headerName).to.equal('X-MS-CLIENT-PRINCIPAL-ASSERTION');
  });

  it('says who the caller is, for the origin, with a short lifetime', async () => {
    const { assertions, verify } = setup();
    const [name, jwt] = await assertions.header(identity(), ORIGIN);
    expect(name).to.equal('X-PLATFORM-CLIENT-PRINCIPAL-ASSERTION');
    const { payload, protectedHeader } = await verify(jwt, 'https://app.example.com');
    expect(protectedHeader).to.include({ alg: 'ES256', typ: 'JWT' });
    expect(protectedHeader.kid).to.be.a('string');
    expect(payload).to.deep.include({
      iss: 'https://app.example.com',
      aud: 'https://app.example.com',
      sub: 'user-1',
      idp: 'corp',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      groups: ['engineers', 'admins'],
      roles: ['writer'],
    });
    expect(payload.exp! - payload.iat!).to.equal(LIFETIME / 1000);
  });

  it('never carries a token, a token secret or the provider session id', async () => {
    const { assertions } = setup();
    const [, jwt] = await assertions.header(identity(), ORIGIN);
    const text = Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8');
    for (const secret of [...Object.values(TOKENS), 'provider-session-id']) expect(text).not.to.include(secret);
    expect(Object.keys(decodeJwt(jwt)).sort()).to.deep.equal(
      ['aud', 'email', 'exp', 'groups', 'iat', 'idp', 'iss', 'name', 'roles', 'sub'].sort(),
    );
  });

  it('leaves out what the identity does not have', async () => {
    const { assertions } = setup();
    const [, jwt] = await assertions.header(identity({ claims: [] }), ORIGIN);
    expect(decodeJwt(jwt)).not.to.have.any.keys('email', 'groups', 'roles');
  });

  it('never says an address the provider does not vouch for', async () => {
    const { assertions } = setup();
    for (const claims of [
      [{ typ: 'email', val: 'ada@example.com' }],
      [
        { typ: 'email', val: 'ada@example.com' },
        { typ: 'email_verified', val: 'false' },
      ],
    ]) {
      const [, jwt] = await assertions.header(identity({ userId: `u-${claims.length}`, claims }), ORIGIN);
      expect(decodeJwt(jwt)).not.to.have.any.keys('email');
    }
  });

  it('with the facts authorization judged the caller by: their groups, roles and verified address only', async () => {
    const { assertions } = setup();
    const judged = identity();
    assertions.noteAccess(judged, { groups: ['acme', 'acme/platform'], roles: [] });
    const payload = decodeJwt((await assertions.header(judged, ORIGIN))[1]);
    expect(payload.groups).to.deep.equal(['acme', 'acme/platform']);
    expect(payload).not.to.have.any.keys('roles', 'email');
    const verified = identity({ userId: 'user-3' });
    assertions.noteAccess(verified, { verifiedEmail: 'ada@example.com', groups: [], roles: ['reader'] });
    expect(decodeJwt((await assertions.header(verified, ORIGIN))[1])).to.deep.include({
      email: 'ada@example.com',
      roles: ['reader'],
    });
  });

  it('takes a configured audience', async () => {
    const { assertions, verify } = setup({ audience: 'urn:example:orders' });
    const [, jwt] = await assertions.header(identity(), ORIGIN);
    expect((await verify(jwt, 'urn:example:orders')).payload.aud).to.equal('urn:example:orders');
  });

  it('signs once per identity and origin, and reuses the header until a third of its life is left', async () => {
    const { assertions, signatures, advance } = setup();
    const caller = identity();
    const first = await assertions.header(caller, ORIGIN);
    expect(await assertions.header(caller, ORIGIN)).to.equal(first);
    expect(assertions.cached(caller, ORIGIN)).to.equal(first);
    // The same sign-in read again (a new identity object): the same assertion.
    expect((await assertions.header(identity(), ORIGIN))[1]).to.equal(first[1]);
    expect(signatures()).to.equal(1);
    advance((LIFETIME * 2) / 3 - 1000);
    expect(assertions.cached(caller, ORIGIN)).to.equal(first);
    advance(1000);
    expect(assertions.cached(caller, ORIGIN)).to.equal(undefined);
    const renewed = await assertions.header(caller, ORIGIN);
    expect(renewed[1]).not.to.equal(first[1]);
    expect(signatures()).to.equal(2);
  });

  it('signs anew for another origin, another user or changed claims', async () => {
    const { assertions, signatures } = setup();
    const caller = identity();
    const here = await assertions.header(caller, ORIGIN);
    const there = await assertions.header(caller, { scheme: 'https', host: 'other.example.com' });
    expect(decodeJwt(there[1]).aud).to.equal('https://other.example.com');
    const other = await assertions.header(identity({ userId: 'user-2' }), ORIGIN);
    const renamed = await assertions.header(identity({ userName: 'Ada King' }), ORIGIN);
    expect(new Set([here[1], there[1], other[1], renamed[1]]).size).to.equal(4);
    expect(signatures()).to.equal(4);
  });

  it('concurrent requests of one identity wait for one signature', async () => {
    const { assertions, signatures } = setup();
    const caller = identity();
    const headers = await Promise.all(Array.from({ length: 20 }, () => assertions.header(caller, ORIGIN)));
    expect(new Set(headers.map(([, jwt]) => jwt)).size).to.equal(1);
    expect(signatures()).to.equal(1);
  });

  it('signs with the key the ring says signs now', async () => {
    const { assertions, ring } = setup();
    const [, jwt] = await assertions.header(identity(), ORIGIN);
    expect(decodeProtectedHeader(jwt).kid).to.equal((await ring.signingKey()).kid);
  });
});
