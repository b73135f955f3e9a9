// Assertion keys given in GATEHOUSE_ASSERTION_KEY: PEM, JWK or a JWK Set whose first key signs.
import { generateKeyPairSync } from 'node:crypto';

import { expect } from 'chai';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';

import { AssertionKeyError, environmentKeyRing } from '../../../src/core/assertion/environment-keys.js';

async function privateJwk(alg: 'ES256' | 'ES384' | 'EdDSA' | 'RS256') {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return exportJWK(privateKey);
}

async function refusal(value: string): Promise<AssertionKeyError> {
  try {
    await environmentKeyRing({ GATEHOUSE_ASSERTION_KEY: value });
  } catch (error) {
    expect(error).to.be.instanceOf(AssertionKeyError);
    return error as AssertionKeyError;
  }
  throw new Error('accepted');
}

describe('assertion keys from the environment', () => {
  it('none when the variable is unset or empty', async () => {
    expect(await environmentKeyRing({})).to.equal(undefined);
    expect(await environmentKeyRing({ GATEHOUSE_ASSERTION_KEY: ' ' })).to.equal(undefined);
  });

  it('a PKCS#8 PEM key signs, and only its public half is published', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const ring = (await environmentKeyRing({ GATEHOUSE_ASSERTION_KEY: pem }))!;
    const key = await ring.signingKey();
    expect(key.alg).to.equal('ES256');
    const published = await ring.publishedKeys();
    expect(published).to.have.length(1);
    expect(published[0]).to.include({ kid: key.kid, alg: 'ES256', use: 'sig' });
    expect(published[0]).not.to.have.property('d');
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.key);
    await jwtVerify(jwt, createLocalJWKSet({ keys: [...published] }));
  });

  it('a JWK Set: the first key signs, every key is published', async () => {
    const first = { ...(await privateJwk('ES384')), kid: 'next' };
    const second = await privateJwk('RS256');
    const ring = (await environmentKeyRing({ GATEHOUSE_ASSERTION_KEY: JSON.stringify({ keys: [first, second] }) }))!;
    const key = await ring.signingKey();
    expect(key).to.include({ kid: 'next', alg: 'ES384' });
    const published = await ring.publishedKeys();
    expect(published.map((k) => k.alg)).to.deep.equal(['ES384', 'RS256']);
    for (const jwk of published) expect(jwk).not.to.have.any.keys('d', 'p', 'q', 'dp', 'dq', 'qi');
  });

  it('an Ed25519 JWK signs as EdDSA', async () => {
    const ring = (await environmentKeyRing({ GATEHOUSE_ASSERTION_KEY: JSON.stringify(await privateJwk('EdDSA')) }))!;
    expect((await ring.signingKey()).alg).to.equal('EdDSA');
  });

  it('refuses a public key, a shared secret, an alg none and text that is no key, without repeating it', async () => {
    const jwk = await privateJwk('ES256');
    const { d: _private, ...publicJwk } = jwk;
    expect((await refusal(JSON.stringify(publicJwk))).message).to.include('a private key is needed');
    expect((await refusal(JSON.stringify({ kty: 'oct', k: 'c2VjcmV0' }))).message).to.include('private key is needed');
    expect((await refusal(JSON.stringify({ ...jwk, alg: 'none' }))).message).to.include('private key is needed');
    expect((await refusal(JSON.stringify({ ...jwk, alg: 'HS256' }))).message).to.include('private key is needed');
    const garbage = await refusal('not-a-key-but-maybe-a-secret');
    expect(garbage.message).to.include('GATEHOUSE_ASSERTION_KEY');
    expect(garbage.message).not.to.include('maybe-a-secret');
    expect((await refusal('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----')).message).to.include('PEM');
    expect((await refusal('{"keys":[]}')).message).to.include('no keys');
  });
});
