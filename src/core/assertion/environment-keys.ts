// Assertion keys given in the environment (GATEHOUSE_ASSERTION_KEY) instead of made and rotated by
// gatehouse: a private key as PKCS#8 PEM, a private JWK, or a JWK Set of private keys whose first
// signs while every one is published (how an operator rotates: add the next key second, wait longer
// than the key set's max-age, move it first, drop the old one once its assertions have expired).
import { createPrivateKey } from 'node:crypto';

import { calculateJwkThumbprint, importJWK, type JWK } from 'jose';

import type { AssertionKeyRing } from './key-ring.js';
import { publicPart, publishedJwk, type SigningKey } from './signing-key.js';

export const ASSERTION_KEY_VARIABLE = 'GATEHOUSE_ASSERTION_KEY';

/** A key in the variable that cannot be used: a startup error naming the variable, never its value. */
export class AssertionKeyError extends Error {}

/** The JWS algorithm of a key type, where the JWK does not name one. */
function algorithmOf(jwk: JWK): string | undefined {
  if (jwk.kty === 'EC') return { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[jwk.crv ?? ''];
  if (jwk.kty === 'OKP') return jwk.crv === 'Ed25519' ? 'EdDSA' : undefined;
  if (jwk.kty === 'RSA') return 'RS256';
  return undefined;
}

/** Algorithms an assertion may be signed with: asymmetric, so that the app holds no secret. */
const ALLOWED = new Set([
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
]);

/** The keys a value of the variable gives, the signing one first. */
async function keysOf(text: string): Promise<Array<{ readonly jwk: JWK; readonly alg: string; readonly kid: string }>> {
  const trimmed = text.trim();
  let jwks: JWK[];
  if (trimmed.startsWith('-----BEGIN')) {
    try {
      jwks = [createPrivateKey(trimmed).export({ format: 'jwk' }) as JWK];
    } catch {
      throw new AssertionKeyError(`${ASSERTION_KEY_VARIABLE}: not a private key in PEM (PKCS#8, SEC1 or PKCS#1)`);
    }
  } else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new AssertionKeyError(
        `${ASSERTION_KEY_VARIABLE}: expected a private key in PEM, a private JWK or a JWK Set`,
      );
    }
    const set = (parsed as { keys?: unknown }).keys;
    jwks = (Array.isArray(set) ? set : [parsed]) as JWK[];
    if (jwks.length === 0 || jwks.some((jwk) => typeof jwk !== 'object' || jwk === null))
      throw new AssertionKeyError(`${ASSERTION_KEY_VARIABLE}: a JWK Set with no keys, or one that is not an object`);
  }
  return Promise.all(
    jwks.map(async (jwk, index) => {
      const which = jwks.length > 1 ? ` (key ${index})` : '';
      const alg = jwk.alg ?? algorithmOf(jwk);
      if (alg === undefined || !ALLOWED.has(alg))
        throw new AssertionKeyError(
          `${ASSERTION_KEY_VARIABLE}${which}: an EC (P-256, P-384, P-521), Ed25519 or RSA private key is needed`,
        );
      if (jwk.d === undefined)
        throw new AssertionKeyError(`${ASSERTION_KEY_VARIABLE}${which}: a private key is needed, not a public one`);
      try {
        await importJWK(jwk, alg);
      } catch {
        throw new AssertionKeyError(`${ASSERTION_KEY_VARIABLE}${which}: the key does not import as ${alg}`);
      }
      const publicJwk = publicPart(jwk);
      return { jwk, alg, kid: jwk.kid ?? (await calculateJwkThumbprint(publicJwk)) };
    }),
  );
}

/** A ring of the keys in the environment, or undefined when the variable is unset or empty. */
export async function environmentKeyRing(env: NodeJS.ProcessEnv): Promise<AssertionKeyRing | undefined> {
  const text = env[ASSERTION_KEY_VARIABLE];
  if (text === undefined || text.trim() === '') return undefined;
  const keys = await keysOf(text);
  const signing = keys[0]!;
  const signingKey: Promise<SigningKey> = importJWK(signing.jwk, signing.alg).then((key) => ({
    kid: signing.kid,
    alg: signing.alg,
    key,
  }));
  const published = Object.freeze(
    keys.map((key) => Object.freeze(publishedJwk({ kid: key.kid, alg: key.alg, publicJwk: publicPart(key.jwk) }))),
  );
  return {
    signingKey: () => signingKey,
    publishedKeys: async () => published,
  };
}
