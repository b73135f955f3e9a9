// Bearer tokens already validated, by a SHA-256 digest of the token, until they
// expire: the next request with the same token costs a hash and a map lookup
// instead of a signature check. Bounded by count and by the size of what the
// entries hold (lru-cache); the least recently used entries go first.
//
// Keyed by a digest, not by the token (docs/architecture.md#sessions-and-the-token-store): the cache's keys never hold a
// credential, a lookup compares 32-byte digests rather than attacker-chosen text
// with stored tokens, and every key is the same small size. SHA-256 rather than
// SHA-512/256: CPUs with SHA instructions (current x86 and ARM servers) hash a
// 1 KB token in about 1.5 µs with it, roughly half of SHA-512/256's time there.
import { hash } from 'node:crypto';

import { LRUCache } from 'lru-cache';

export const VALIDATED_TOKEN_CACHE_MAX = 10_000;
/**
 * An entry's identity is built from its token (claims, and the token itself when the token store is on), so the
 * tokens' total length bounds what the entries hold: 16 MiB, about 16 000 typical 1 KB tokens.
 */
export const VALIDATED_TOKEN_CACHE_CHARS = 16 * 1024 * 1024;

/** A token's cache key: its SHA-256 digest. Branded so a raw token cannot be passed where a key is expected. */
export type TokenDigest = string & { readonly __tokenDigest: unique symbol };

export class ValidatedTokenCache<T extends NonNullable<unknown>> {
  /** Undefined when the cache is off (a maximum of 0). */
  readonly #entries: LRUCache<TokenDigest, T> | undefined;

  constructor(
    private readonly now: () => number = Date.now,
    max = VALIDATED_TOKEN_CACHE_MAX,
    private readonly maxChars = VALIDATED_TOKEN_CACHE_CHARS,
  ) {
    // Each entry lives until its token expires (ttl per entry, checked on every get against `now`),
    // and is charged the token's length against maxChars; the least recently used go first.
    this.#entries =
      max === 0 ? undefined : new LRUCache<TokenDigest, T>({ max, maxSize: maxChars, ttlResolution: 0, perf: { now } });
  }

  /** The 32 digest bytes as a one-byte-per-character string ('binary' is latin1): a map key needs no printable encoding. */
  static key(token: string): TokenDigest {
    return hash('sha256', token, 'binary') as TokenDigest;
  }

  get(key: TokenDigest): T | undefined {
    return this.#entries?.get(key);
  }

  /** `tokenLength` is the length of the token `key` digests: what the entry is charged against the size bound. */
  set(key: TokenDigest, tokenLength: number, value: T, expiresAt: number): void {
    // lru-cache counts an entry stale once more than `ttl` whole milliseconds have passed since it
    // was set; here it is gone at expiresAt itself, hence one less. 0 would mean "never stale".
    const ttl = Math.ceil(expiresAt - this.now()) - 1;
    if (this.#entries === undefined || tokenLength > this.maxChars || !(ttl >= 1)) return;
    this.#entries.set(key, value, { ttl: Math.min(ttl, 2 ** 31 - 1), size: Math.max(1, tokenLength) });
  }

  get size(): number {
    return this.#entries?.size ?? 0;
  }

  /** The total length of the tokens held. */
  get chars(): number {
    return this.#entries?.calculatedSize ?? 0;
  }
}
