// A session's DPoP key (RFC 9449): made at sign-in, kept as a private JWK in
// the session record (which the token store seals), and used for the proofs
// of that session's token requests, so its tokens are bound to it alone.
// See docs/configuration.md#proof-of-possession-dpop.
import { webcrypto } from 'node:crypto';

import * as oidc from 'openid-client';

/** The algorithm of every session's key: ES256, which every provider that supports DPoP takes. */
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/** A session's key as its record keeps it (private: only ever inside the sealed record). */
export type DpopKey = webcrypto.JsonWebKey;

/** A new key for a new session. */
export async function newDpopKey(): Promise<{ keyPair: webcrypto.CryptoKeyPair; jwk: DpopKey }> {
  const keyPair = (await oidc.randomDPoPKeyPair('ES256', { extractable: true })) as webcrypto.CryptoKeyPair;
  const { kty, crv, x, y, d } = await webcrypto.subtle.exportKey('jwk', keyPair.privateKey);
  return { keyPair, jwk: { kty, crv, x, y, d } };
}

/** The key pair of a session's kept key (the public key is its x and y). */
export async function dpopKeyPair(jwk: DpopKey): Promise<webcrypto.CryptoKeyPair> {
  const { kty, crv, x, y, d } = jwk;
  const [privateKey, publicKey] = await Promise.all([
    webcrypto.subtle.importKey('jwk', { kty, crv, x, y, d }, ALGORITHM, false, ['sign']),
    webcrypto.subtle.importKey('jwk', { kty, crv, x, y }, ALGORITHM, true, ['verify']),
  ]);
  return { privateKey, publicKey };
}
