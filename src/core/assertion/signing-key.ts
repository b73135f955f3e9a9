// One key of the assertion key ring: what is stored of it, and the key made from it.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

/** The algorithm of the keys gatehouse makes itself. */
export const DEFAULT_ASSERTION_ALGORITHM = 'ES256';

/** A key as the token store keeps it (sealed, like every record). */
export interface StoredAssertionKey {
  /** RFC 7638 thumbprint of the public key: the JWT header's `kid`. */
  readonly kid: string;
  readonly alg: string;
  /** The public half, as published (without kid, alg or use). */
  readonly publicJwk: JWK;
  /** The private half; dropped once the key signs no more (only its public half is published then). */
  readonly privateJwk?: JWK;
  /** From when it signs (ms since the epoch); it is published before that. */
  readonly signFrom: number;
  /** Until when it signs (exclusive); it stays published until its last assertion has expired. */
  readonly signUntil: number;
}

/** A key ready to sign with. */
export interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly key: CryptoKey | Uint8Array;
}

/** The public members of a JWK: what may be published of a private one. */
const PUBLIC_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['kty', 'crv', 'x', 'y'],
  OKP: ['kty', 'crv', 'x'],
  RSA: ['kty', 'n', 'e'],
};

/** The public half of a JWK (a private one, or a public one with extra members). */
export function publicPart(jwk: JWK): JWK {
  const members = PUBLIC_MEMBERS[jwk.kty ?? ''];
  if (members === undefined) throw new Error(`an assertion key must be EC, OKP or RSA, not ${String(jwk.kty)}`);
  const given = jwk as Readonly<Record<string, unknown>>;
  const part: Record<string, unknown> = {};
  for (const member of members) if (given[member] !== undefined) part[member] = given[member];
  return part as JWK;
}

/** A new key pair, stored from `signFrom` to `signUntil`. */
export async function newStoredKey(signFrom: number, signUntil: number): Promise<StoredAssertionKey> {
  const { privateKey } = await generateKeyPair(DEFAULT_ASSERTION_ALGORITHM, { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const publicJwk = publicPart(privateJwk);
  return {
    kid: await calculateJwkThumbprint(publicJwk),
    alg: DEFAULT_ASSERTION_ALGORITHM,
    publicJwk,
    privateJwk,
    signFrom,
    signUntil,
  };
}

/** The key as a JWKS document lists it. */
export function publishedJwk(key: Pick<StoredAssertionKey, 'kid' | 'alg' | 'publicJwk'>): JWK {
  return { ...key.publicJwk, kid: key.kid, alg: key.alg, use: 'sig' };
}

/** The private key of a stored key, ready to sign with. */
export async function signingKeyOf(stored: StoredAssertionKey): Promise<SigningKey> {
  if (stored.privateJwk === undefined) throw new Error(`assertion key ${stored.kid} signs no more`);
  return { kid: stored.kid, alg: stored.alg, key: await importJWK(stored.privateJwk, stored.alg) };
}
