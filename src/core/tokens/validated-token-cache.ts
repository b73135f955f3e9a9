// Bearer tokens already validated, until they expire: the next request with the
// same token costs a map lookup instead of a signature check. Bounded by count
// and by the tokens' total length; the oldest entries go first.
//
// Keyed by the token itself, not a digest of it. A digest cost every request an
// OpenSSL call on the event loop; measured with validations in flight (signature
// checks on libuv's pool beside it) that was 8–15 µs per miss, about a tenth of
// a whole validation. The token is kept in memory either way (the identity
// holds it for the token headers), and only tokens that passed validation are
// ever stored. A lookup compares a token's text with a stored one only after
// their seeded string hashes matched, so its timing tells nothing about the
// tokens held.

export const VALIDATED_TOKEN_CACHE_MAX = 10_000;
/** Tokens are one byte a character (base64url), so this bounds the keys' memory: 16 MiB, about 16 000 typical 1 KB tokens. */
export const VALIDATED_TOKEN_CACHE_CHARS = 16 * 1024 * 1024;

export class ValidatedTokenCache<T> {
  readonly #entries = new Map<string, { value: T; expiresAt: number }>();
  #chars = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly max = VALIDATED_TOKEN_CACHE_MAX,
    private readonly maxChars = VALIDATED_TOKEN_CACHE_CHARS,
  ) {}

  get(token: string): T | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.#delete(token);
      return undefined;
    }
    return entry.value;
  }

  set(token: string, value: T, expiresAt: number): void {
    if (this.max === 0 || token.length > this.maxChars || expiresAt <= this.now()) return;
    this.#delete(token);
    this.#entries.set(token, { value, expiresAt });
    this.#chars += token.length;
    while (this.#entries.size > this.max || this.#chars > this.maxChars) this.#delete(this.#entries.keys().next().value as string);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The tokens' total length. */
  get chars(): number {
    return this.#chars;
  }

  #delete(token: string): void {
    if (this.#entries.delete(token)) this.#chars -= token.length;
  }
}
