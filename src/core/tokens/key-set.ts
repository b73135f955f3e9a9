// A provider's signing keys (JWKS), fetched once and kept. A token naming a
// key we do not have triggers one refresh, shared by every request that asks
// meanwhile, and at most one per cool-down: a flood of made-up key ids costs
// the provider nothing and never holds up requests with known keys.
import { importJWK, type JWK, type JWSHeaderParameters } from 'jose';

import { ProviderUnavailableError } from '../providers/errors.js';
import { callProvider, jsonAnswer } from '../providers/provider-http.js';
import { InvalidTokenError } from './errors.js';

export const KEY_REFRESH_COOLDOWN_MS = 30_000;
/** Keys are re-read in the background this long after the last fetch (rotation without unknown kids). */
export const KEY_MAX_AGE_MS = 6 * 3_600_000;
const MAX_KEYS = 100;

type ImportedKey = Awaited<ReturnType<typeof importJWK>>;

export class RemoteKeySet {
  #jwks: JWK[] | undefined;
  /** Imported keys by key id, then algorithm: two lookups of strings the header already holds, no key string built per token. */
  readonly #imported = new Map<string, Map<string, Promise<ImportedKey>>>();
  #fetching: Promise<void> | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  /** When an unknown key id last caused a fetch (the load at first use does not count). */
  #unknownKidFetchAt = Number.NEGATIVE_INFINITY;

  constructor(
    /** The JWKS URL (from discovery, so it may need a lookup first). */
    private readonly jwksUri: () => Promise<string>,
    private readonly now: () => number = Date.now,
    private readonly cooldownMs = KEY_REFRESH_COOLDOWN_MS,
  ) {}

  /** The key a JWS header names; bound, so it is handed to jose as the key resolver as is. */
  readonly key = (header: JWSHeaderParameters): Promise<ImportedKey> => {
    // The common case, without a further async step: a key id and algorithm seen before
    // (imports are kept until the next fetch; a failed import is dropped from the map).
    const known = this.#imported.get(header.kid ?? '')?.get(header.alg ?? '');
    if (known !== undefined && this.now() - this.#fetchedAt < KEY_MAX_AGE_MS) return known;
    return this.#lookUp(header);
  };

  async #lookUp(header: JWSHeaderParameters): Promise<ImportedKey> {
    if (this.#jwks === undefined) await this.#refresh();
    let jwk = this.#find(header);
    if (jwk === undefined && this.#fetching !== undefined) {
      // A fetch is under way (another request's unknown kid, most likely the same new key after a
      // rotation): its answer is waited for, as the request that caused it waits, not refused meanwhile.
      await this.#fetching;
      jwk = this.#find(header);
    } else if (jwk === undefined && this.now() - this.#unknownKidFetchAt >= this.cooldownMs) {
      this.#unknownKidFetchAt = this.now();
      await this.#refresh();
      jwk = this.#find(header);
    } else if (this.now() - this.#fetchedAt >= KEY_MAX_AGE_MS) {
      void this.#refresh().catch(() => undefined); // in the background; the old keys serve meanwhile
    }
    if (jwk === undefined) throw new InvalidTokenError(header.kid === undefined ? 'no key id and no single matching key' : 'unknown signing key');
    const kid = header.kid ?? '';
    const alg = header.alg ?? '';
    // Only keys the JWKS has get here, so the map stays as small as the key set.
    const byAlg = this.#imported.get(kid) ?? new Map<string, Promise<ImportedKey>>();
    this.#imported.set(kid, byAlg);
    let imported = byAlg.get(alg);
    if (imported === undefined) {
      imported = importJWK(jwk, header.alg!);
      byAlg.set(alg, imported);
      imported.catch(() => byAlg.delete(alg));
    }
    return this.#settle(imported);
  }

  async #settle(imported: Promise<ImportedKey>): Promise<ImportedKey> {
    try {
      return await imported;
    } catch {
      throw new InvalidTokenError('signing key does not fit the algorithm');
    }
  }

  #find(header: JWSHeaderParameters): JWK | undefined {
    const usable = (this.#jwks ?? []).filter((k) => (k.use === undefined || k.use === 'sig') && (k.alg === undefined || k.alg === header.alg));
    if (header.kid !== undefined) return usable.find((k) => k.kid === header.kid);
    return usable.length === 1 ? usable[0] : undefined;
  }

  /** One fetch at a time; a failed fetch keeps the old keys. */
  #refresh(): Promise<void> {
    this.#fetching ??= this.#fetch().finally(() => {
      this.#fetching = undefined;
    });
    return this.#fetching;
  }

  async #fetch(): Promise<void> {
    this.#fetchedAt = this.now();
    const answer = await callProvider(await this.jwksUri(), { headers: { accept: 'application/json, application/jwk-set+json' } }, 'signing keys');
    const body = jsonAnswer(answer, 'signing keys');
    if (!Array.isArray(body.keys)) throw new ProviderUnavailableError('signing keys: no "keys" array');
    this.#jwks = (body.keys as unknown[]).filter((k): k is JWK => typeof k === 'object' && k !== null && typeof (k as JWK).kty === 'string').slice(0, MAX_KEYS);
    this.#imported.clear();
  }
}
