import { createHash, generateKeyPairSync, sign } from 'node:crypto';

import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';

import { ClientSecretJwt, CLIENT_SECRET_LIFETIME_SECONDS } from '../../../src/core/oidc/client-secret-jwt.js';
import { AuthenticationTokens } from '../../../src/core/tokens/authentication-token.js';
import {
  asymmetricAlgorithms,
  CLOCK_TOLERANCE_SECONDS,
  MAX_TOKEN_LENGTH,
  peekToken,
  validateJwt,
  type JwtRules,
} from '../../../src/core/tokens/jwt-validator.js';
import { RemoteKeySet } from '../../../src/core/tokens/key-set.js';
import { InvalidTokenError } from '../../../src/core/tokens/errors.js';
import { ValidatedTokenCache } from '../../../src/core/tokens/validated-token-cache.js';
import { startTokenIssuer, type TokenIssuer } from '../../stand-ins/token-issuer.js';

describe('validated token cache', () => {
  const key = (token: string) => ValidatedTokenCache.key(token);

  it('is keyed by the SHA-256 digest of the token, never by the token itself', () => {
    const token = `eyJhbGciOiJSUzI1NiJ9.${'x'.repeat(600)}.signature`;
    const digest = key(token);
    expect(Buffer.from(digest, 'latin1').equals(createHash('sha256').update(token).digest())).to.equal(true);
    expect(digest).to.have.length(32);
    expect(key(token)).to.equal(digest);
    expect(key(`${token}x`)).to.not.equal(digest);
  });

  it('keeps a token until its expiry, bounded in number with the oldest going first', () => {
    let now = 1_000;
    const cache = new ValidatedTokenCache<string>(() => now, 3);
    cache.set(key('token-a'), 7, 'identity-a', 2_000);
    expect(cache.get(key('token-a'))).to.equal('identity-a');
    expect(cache.get(key('token-b'))).to.equal(undefined);
    now = 2_000;
    expect(cache.get(key('token-a'))).to.equal(undefined);
    expect([cache.size, cache.chars]).to.deep.equal([0, 0]);
    now = 1_000;
    cache.set(key('expired'), 7, 'x', 999);
    expect(cache.size).to.equal(0);
    for (const k of ['k1', 'k2', 'k3', 'k4']) cache.set(key(k), 2, k, 5_000);
    expect(cache.size).to.equal(3);
    expect(cache.get(key('k1'))).to.equal(undefined);
    expect(cache.get(key('k4'))).to.equal('k4');
  });

  it("is bounded by the tokens' total length too, and keeps nothing when its size is 0", () => {
    const cache = new ValidatedTokenCache<string>(() => 1_000, 100, 10);
    cache.set(key('aaaa'), 4, 'a', 5_000);
    cache.set(key('bbbb'), 4, 'b', 5_000);
    expect(cache.chars).to.equal(8);
    cache.set(key('cccc'), 4, 'c', 5_000); // 12 characters: the least recently used goes
    expect([cache.get(key('aaaa')), cache.get(key('bbbb')), cache.get(key('cccc'))]).to.deep.equal([
      undefined,
      'b',
      'c',
    ]);
    expect(cache.chars).to.equal(8);
    cache.set(key('bbbb'), 4, 'b2', 5_000); // replaced, not counted twice
    expect(cache.chars).to.equal(8);
    expect(cache.get(key('bbbb'))).to.equal('b2');
    cache.set(key('x'.repeat(11)), 11, 'too long', 5_000); // longer than the whole budget: never kept, nothing evicted for it
    expect(cache.size).to.equal(2);
    const off = new ValidatedTokenCache<string>(() => 1_000, 0);
    off.set(key('token'), 5, 'identity', 5_000);
    expect([off.size, off.get(key('token'))]).to.deep.equal([0, undefined]);
  });
});

describe('peeking at claims before verification', () => {
  const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const reason = (token: string) => {
    try {
      peekToken(token);
    } catch (error) {
      expect(error).to.be.instanceOf(InvalidTokenError);
      return (error as InvalidTokenError).reason;
    }
    return 'accepted';
  };

  it('reads the same claims as jose, including non-ASCII text', () => {
    const claims = {
      iss: 'https://idp.example',
      sub: 'Zoë 🙂',
      aud: ['a', 'b'],
      exp: 2_000_000_000,
      nested: { x: [1, null] },
    };
    const token = `${segment({ alg: 'RS256' })}.${segment(claims)}.c2ln`;
    expect(peekToken(token).claims).to.deep.equal(decodeJwt(token)).and.to.deep.equal(claims);
  });

  it('refuses anything but a three-segment token whose payload is a JSON object', () => {
    const header = segment({ alg: 'RS256' });
    expect(reason(`${header}.${segment({ sub: 'x' })}.sig.more.parts`)).to.equal('malformed token'); // a JWE has five
    expect(reason(`${header}.${segment({ sub: 'x' })}`)).to.equal('malformed token');
    expect(reason('no-dots-at-all')).to.equal('malformed token');
    expect(reason(`${header}.${segment([1, 2])}.sig`)).to.equal('malformed token');
    expect(reason(`${header}.${segment('text')}.sig`)).to.equal('malformed token');
    expect(reason(`${header}.${segment(null)}.sig`)).to.equal('malformed token');
    expect(reason(`${header}.${Buffer.from('{"sub": ').toString('base64url')}.sig`)).to.equal('malformed token');
    expect(
      reason(
        `${header}.${Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]).toString('base64url')}.sig`,
      ),
    ).to.equal('malformed token'); // not UTF-8
    expect(reason(`${header}.${segment({ sub: 'x' })}.${'s'.repeat(MAX_TOKEN_LENGTH)}`)).to.equal('token too large');
    expect(reason(`${header}.${segment({ sub: 'x' })}.sig`)).to.equal('accepted');
  });
});

describe('validating a JWT', () => {
  let issuer: TokenIssuer;
  let rules: JwtRules;
  const corpApi = { audiences: ['api://corp'] };
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (error: Error) => (error instanceof InvalidTokenError ? error.reason : error.message),
    );

  before(async () => {
    issuer = await startTokenIssuer();
    rules = {
      keys: new RemoteKeySet(async () => `${issuer.url}/keys`),
      algorithms: ['RS256'],
      issuer: () => issuer.issuer('/corp'),
      now: Date.now,
    };
  });
  after(() => issuer.close());

  it('returns the signed claims of a good token', async () => {
    const token = await issuer.mint({ iss: issuer.issuer('/corp'), aud: 'api://corp', sub: 'user-1' });
    expect(await validateJwt(token, rules, corpApi)).to.include({ sub: 'user-1' });
  });

  it('returns the verified claims, never the ones it was handed to pick the provider', async () => {
    const good = await issuer.mint({ iss: issuer.issuer('/corp'), aud: 'api://corp', sub: 'user-1' });
    const other = await issuer.mint({ iss: issuer.issuer('/corp'), aud: 'api://corp', sub: 'admin' });
    expect(await validateJwt(good, rules, corpApi, peekToken(other))).to.include({ sub: 'user-1' });
  });

  it('refuses an unencoded payload (b64: false), which a JWT never has', async () => {
    const key = issuer.keys.at(-1)!;
    const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: key.kid, b64: false, crit: ['b64'] })).toString(
      'base64url',
    );
    // The raw payload: text that, read as base64url, is also a JWT payload of this issuer.
    const payload = Buffer.from(
      JSON.stringify({
        iss: issuer.issuer('/corp'),
        aud: 'api://corp',
        sub: 'user-1',
        exp: Math.floor(Date.now() / 1000) + 600,
      }),
    ).toString('base64url');
    const signature = sign('sha256', Buffer.from(`${header}.${payload}`), key.privateKey).toString('base64url');
    expect(await refusal(validateJwt(`${header}.${payload}.${signature}`, rules, corpApi))).to.equal('malformed token');
  });

  describe('claim checks (RFC 7519 §4.1, by jose)', () => {
    const now = 1_800_000_000;
    const audiences = ['api://corp', 'corp-app'];
    const valid = () => ({ iss: issuer.issuer('/corp'), aud: 'api://corp', sub: 'u', iat: now - 10, exp: now + 600 });
    /** A token of this issuer whose payload is exactly `json`, signed with its current key. */
    const signedRaw = (json: string) => {
      const key = issuer.keys.at(-1)!;
      const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: key.kid })).toString('base64url');
      const payload = Buffer.from(json).toString('base64url');
      return `${header}.${payload}.${sign('sha256', Buffer.from(`${header}.${payload}`), key.privateKey).toString('base64url')}`;
    };
    const reason = (claims: Record<string, unknown>, nonce?: string) =>
      refusal(
        validateJwt(
          signedRaw(JSON.stringify(claims)),
          { ...rules, now: () => now * 1000 + 999 },
          { audiences, ...(nonce !== undefined ? { nonce } : {}) },
        ),
      );

    it('accept a token for one of our audiences, as a string or in a list', async () => {
      expect(await reason(valid())).to.equal('accepted');
      expect(await reason({ ...valid(), aud: ['someone-else', 'corp-app'] })).to.equal('accepted');
    });

    it('refuse a missing or other issuer and an audience that is not ours', async () => {
      expect(await reason({ ...valid(), iss: undefined })).to.equal('claim iss missing');
      expect(await reason({ ...valid(), iss: `${issuer.issuer('/corp')}/` })).to.equal('claim iss check_failed');
      expect(await reason({ ...valid(), aud: undefined })).to.equal('claim aud missing');
      expect(await reason({ ...valid(), aud: 'api://other' })).to.equal('claim aud check_failed');
      expect(await reason({ ...valid(), aud: ['api://other'] })).to.equal('claim aud check_failed');
      expect(await reason({ ...valid(), aud: [] })).to.equal('claim aud check_failed');
      expect(await reason({ ...valid(), aud: { 0: 'api://corp' } })).to.equal('claim aud check_failed');
    });

    it('require exp, a finite number of seconds, not passed beyond the clock tolerance', async () => {
      expect(await reason({ ...valid(), exp: undefined })).to.equal('claim exp missing');
      expect(await reason({ ...valid(), exp: String(now + 600) })).to.equal('claim exp invalid');
      const infinite = await refusal(
        validateJwt(
          signedRaw(`{"iss":"${issuer.issuer('/corp')}","aud":"api://corp","exp":1e999}`),
          { ...rules, now: () => now * 1000 },
          { audiences },
        ),
      );
      expect(infinite).to.equal('claim exp invalid');
      expect(await reason({ ...valid(), exp: now - CLOCK_TOLERANCE_SECONDS + 1 })).to.equal('accepted');
      expect(await reason({ ...valid(), exp: now - CLOCK_TOLERANCE_SECONDS })).to.equal('expired');
    });

    it('refuse nbf still ahead beyond the clock tolerance, and dates that are not numbers', async () => {
      expect(await reason({ ...valid(), nbf: now + CLOCK_TOLERANCE_SECONDS })).to.equal('accepted');
      expect(await reason({ ...valid(), nbf: now + CLOCK_TOLERANCE_SECONDS + 1 })).to.equal('claim nbf check_failed');
      expect(await reason({ ...valid(), nbf: 'now' })).to.equal('claim nbf invalid');
      expect(await reason({ ...valid(), iat: null })).to.equal('claim iat invalid');
    });

    it('compare the nonce when one is expected', async () => {
      expect(await reason({ ...valid(), nonce: 'n-1' }, 'n-1')).to.equal('accepted');
      expect(await reason({ ...valid(), nonce: 'n-2' }, 'n-1')).to.equal('nonce mismatch');
      expect(await reason(valid(), 'n-1')).to.equal('nonce mismatch');
    });
  });

  it('refuses a token whose claims fail, with the claim named', async () => {
    const token = await issuer.mint({ iss: issuer.issuer('/corp'), aud: 'api://other', sub: 'user-1' });
    expect(await refusal(validateJwt(token, rules, corpApi))).to.equal('claim aud check_failed');
  });
});

describe('asymmetric algorithm allow-list', () => {
  it('keeps only asymmetric algorithms a provider announces; never none or HMAC', () => {
    expect(asymmetricAlgorithms(['RS256', 'HS256', 'none', 'ES256', 'PS384'])).to.deep.equal([
      'RS256',
      'ES256',
      'PS384',
    ]);
    expect(asymmetricAlgorithms(['HS256'])).to.deep.equal(['RS256']);
    expect(asymmetricAlgorithms(undefined)).to.deep.equal(['RS256']);
  });
});

describe('authentication tokens', () => {
  const key = Buffer.alloc(32, 1);
  const sid = 'A'.repeat(43);
  it('name their session; expired ones pass only within the given grace', async () => {
    let now = Date.UTC(2026, 0, 1);
    const tokens = new AuthenticationTokens(key, 'shop', () => now);
    const token = await tokens.issue(sid, { userId: 'u', provider: 'github', expiresAt: now + 60_000 });
    expect(await tokens.sessionId(token)).to.equal(sid);
    now += 120_000;
    await tokens.sessionId(token).then(
      () => expect.fail('accepted'),
      (e: Error) => expect(e.message).to.contain('expired'),
    );
    expect(await tokens.sessionId(token, 3_600_000)).to.equal(sid);
    const other = new AuthenticationTokens(key, 'another-app', () => now);
    await other.sessionId(token, 3_600_000).then(
      () => expect.fail('accepted by another app'),
      (e: Error) => expect(e.name).to.equal('InvalidTokenError'),
    );
  });
});

describe('Sign in with Apple client secret', () => {
  it('is an ES256 JWT for Apple, renewed before it expires', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    let now = Date.UTC(2026, 0, 1);
    const secret = new ClientSecretJwt(
      { teamId: 'TEAM', keyId: 'KID', privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
      'com.example.web',
      () => now,
    );
    expect(() => secret.current()).to.throw();
    await secret.renew();
    const first = secret.current();
    const { payload } = await jwtVerify(first, publicKey, {
      issuer: 'TEAM',
      audience: 'https://appleid.apple.com',
      subject: 'com.example.web',
      currentDate: new Date(now),
    });
    expect(payload.exp! - payload.iat!).to.equal(CLIENT_SECRET_LIFETIME_SECONDS);
    expect(decodeProtectedHeader(first)).to.include({ alg: 'ES256', kid: 'KID' });
    now += 60_000;
    await secret.renew();
    expect(secret.current(), 'still fresh: kept').to.equal(first);
    now += (CLIENT_SECRET_LIFETIME_SECONDS - 300) * 1000;
    await secret.renew();
    expect(secret.current(), 'near expiry: renewed').to.not.equal(first);
    expect(decodeJwt(secret.current()).iat).to.equal(Math.floor(now / 1000));
  });

  it('a key that is not P-256 PKCS#8 is a clear provider-unavailable error', async () => {
    const secret = new ClientSecretJwt({ teamId: 'T', keyId: 'K', privateKeyPem: 'not a key' }, 'c');
    await secret.renew().then(
      () => expect.fail('renewed'),
      (e: Error) => expect(e.message).to.contain('PKCS#8'),
    );
  });
});
