// A provider's signing keys (JWKS). jose's remote key set fetches, validates and
// caches the set, picks the key a token's header names and imports it once; the
// fetch goes through boundedFetch (size-limited, failures made ProviderUnavailable).
//
// When to fetch again is decided here, because jose's own rule does not fit a
// gateway: jose re-fetches in the foreground once its cache is old (every request
// fails while the provider is briefly down at that moment), and counts its first
// load against the cool-down (a key rotated in the first 30 s is refused). So jose
// never re-fetches on its own (infinite cache age and cool-down), and this class:
// - fetches for an unknown key id at most once per cool-down, not counting the
//   first load, and lets every request that meets the same new key id wait for the
//   fetch already under way rather than be refused;
// - re-reads the set in the background after KEY_MAX_AGE_MS (keys removed from
//   the set stop being accepted), while the keys it has keep serving.
import { createRemoteJWKSet, customFetch, errors, type FlattenedJWSInput, type JWSHeaderParameters } from 'jose';

import { ProviderUnavailableError } from '../providers/errors.js';
import { boundedFetch, PROVIDER_TIMEOUT_MS } from '../providers/provider-http.js';
import { InvalidTokenError } from './errors.js';

export const KEY_REFRESH_COOLDOWN_MS = 30_000;
/** Keys are re-read in the background this long after the last fetch (rotation without unknown kids). */
export const KEY_MAX_AGE_MS = 6 * 3_600_000;

type JoseKeySet = ReturnType<typeof createRemoteJWKSet>;
type ImportedKey = Awaited<ReturnType<JoseKeySet>>;

export class RemoteKeySet {
  #set: JoseKeySet | undefined;
  #creating: Promise<JoseKeySet> | undefined;
  #loadedAt = Number.NEGATIVE_INFINITY;
  /** When an unknown key id last caused a fetch (the load at first use does not count). */
  #unknownKidFetchAt = Number.NEGATIVE_INFINITY;
  /**
   * The keys jose picked, by key id then algorithm, until the set is read again: the common case
   * (a key seen before) returns at once, without jose's asynchronous steps (a bearer cache miss
   * pays for every one). Only keys the set has get here, so it stays as small as the set.
   */
  readonly #picked = new Map<string, Map<string, Promise<ImportedKey>>>();

  constructor(
    /** The JWKS URL (from discovery, so it may need a lookup first). */
    private readonly jwksUri: () => Promise<string>,
    private readonly now: () => number = Date.now,
    private readonly cooldownMs = KEY_REFRESH_COOLDOWN_MS,
  ) {}

  /** The key a JWS header names; bound, so it is handed to jose as the key resolver as is. */
  readonly key = (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ImportedKey> => {
    const known = this.#picked.get(header.kid ?? '')?.get(header.alg ?? '');
    if (known !== undefined && this.now() - this.#loadedAt < KEY_MAX_AGE_MS) return known;
    return this.#lookUp(header, token);
  };

  async #lookUp(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ImportedKey> {
    const set = this.#set ?? (await (this.#creating ??= this.#create()));
    try {
      if (!set.fresh) await this.#load(set);
      else if (this.now() - this.#loadedAt >= KEY_MAX_AGE_MS && !set.reloading) {
        void this.#load(set).catch(() => undefined); // the keys held serve meanwhile
      }
      const key = await this.#pick(set, header, token);
      const byAlg = this.#picked.get(header.kid ?? '') ?? new Map<string, Promise<ImportedKey>>();
      this.#picked.set(header.kid ?? '', byAlg);
      byAlg.set(header.alg ?? '', Promise.resolve(key));
      return key;
    } catch (error) {
      throw keyError(error);
    }
  }

  async #pick(set: JoseKeySet, header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ImportedKey> {
    try {
      return await set(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      if (set.reloading) {
        // Another request's fetch (most likely for the same new key after a rotation): waited
        // for, as the request that caused it waits, rather than refused meanwhile.
        await this.#load(set);
      } else if (this.now() - this.#unknownKidFetchAt >= this.cooldownMs) {
        this.#unknownKidFetchAt = this.now();
        await this.#load(set);
      } else {
        throw error;
      }
      return set(header, token);
    }
  }

  async #load(set: JoseKeySet): Promise<void> {
    await set.reload();
    this.#picked.clear(); // a key the set no longer has is no longer picked
    this.#loadedAt = this.now();
  }

  async #create(): Promise<JoseKeySet> {
    let url: URL;
    try {
      url = new URL(await this.jwksUri());
    } catch (error) {
      this.#creating = undefined; // discovery may answer next time
      throw error;
    }
    this.#set = createRemoteJWKSet(url, {
      timeoutDuration: PROVIDER_TIMEOUT_MS,
      cooldownDuration: Number.POSITIVE_INFINITY,
      cacheMaxAge: Number.POSITIVE_INFINITY,
      [customFetch]: fetchKeys,
    });
    return this.#set;
  }
}

/** The key set's fetch: a network failure is the provider being unavailable (jose reports timeouts itself). */
async function fetchKeys(url: string, init: RequestInit): Promise<Response> {
  try {
    return await boundedFetch(url, init);
  } catch (error) {
    if (error instanceof ProviderUnavailableError || (error instanceof Error && error.name === 'TimeoutError'))
      throw error;
    throw new ProviderUnavailableError('signing keys: provider unreachable');
  }
}

/** jose's key-set errors in gatehouse's terms: keys that cannot be had are a 503, a key the set lacks a bad token. */
function keyError(error: unknown): unknown {
  if (error instanceof ProviderUnavailableError || error instanceof InvalidTokenError) return error;
  if (error instanceof errors.JWKSNoMatchingKey) return new InvalidTokenError('unknown signing key');
  if (error instanceof errors.JWKSTimeout) return new ProviderUnavailableError('signing keys: provider timed out');
  if (error instanceof errors.JWKSInvalid) return new ProviderUnavailableError('signing keys: not a key set');
  if (error instanceof errors.JOSENotSupported) return new InvalidTokenError('algorithm not supported');
  if (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC')
    return new ProviderUnavailableError('signing keys: no key set answer');
  return error;
}
