// Sign in with Apple's client secret: a short-lived ES256 JWT signed with the
// developer's private key (iss = team id, sub = client id, aud = Apple),
// made by jose and renewed well before it expires.
import { importPKCS8, SignJWT } from 'jose';

import { ProviderUnavailableError } from '../providers/errors.js';

const AUDIENCE = 'https://appleid.apple.com';
/** Apple allows up to six months; a short life limits what a leaked secret is worth. */
export const CLIENT_SECRET_LIFETIME_SECONDS = 3600;
/** Renewed when less than this is left, so a secret never expires in flight. */
const RENEW_BEFORE_SECONDS = 600;

export class ClientSecretJwt {
  #current: { jwt: string; expiresAt: number } | undefined;
  #renewing: Promise<void> | undefined;
  #key: ReturnType<typeof importPKCS8> | undefined;

  constructor(
    private readonly key: { readonly teamId: string; readonly keyId: string; readonly privateKeyPem: string },
    private readonly clientId: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Makes sure a secret with time left is ready (call before each token request). */
  async renew(): Promise<void> {
    if (this.#current !== undefined && this.#current.expiresAt - this.now() > RENEW_BEFORE_SECONDS * 1000) return;
    this.#renewing ??= this.#sign().finally(() => {
      this.#renewing = undefined;
    });
    await this.#renewing;
  }

  /** The secret renew() made ready. */
  current(): string {
    if (this.#current === undefined) throw new ProviderUnavailableError('client secret not ready');
    return this.#current.jwt;
  }

  async #sign(): Promise<void> {
    this.#key ??= importPKCS8(this.key.privateKeyPem, 'ES256');
    let key: Awaited<ReturnType<typeof importPKCS8>>;
    try {
      key = await this.#key;
    } catch {
      this.#key = undefined;
      throw new ProviderUnavailableError('the Sign in with Apple private key is not a PKCS#8 P-256 key');
    }
    const issuedAt = Math.floor(this.now() / 1000);
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.key.keyId })
      .setIssuer(this.key.teamId)
      .setSubject(this.clientId)
      .setAudience(AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + CLIENT_SECRET_LIFETIME_SECONDS)
      .sign(key);
    this.#current = { jwt, expiresAt: (issuedAt + CLIENT_SECRET_LIFETIME_SECONDS) * 1000 };
  }
}
