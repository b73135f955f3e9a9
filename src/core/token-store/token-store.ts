/**
 * Where server-side session records live (the spec's token store). The
 * interface is all callers see; a shared store for several instances plugs
 * in behind it and must pass the same conformance suite
 * (test/core/token-store-conformance.ts).
 *
 * Records are plain JSON values. A record past its expiry, or one that
 * cannot be read back intact, is absent.
 */
export interface TokenStore<T> {
  get(id: string): Promise<T | undefined>;
  /** Creates or replaces the record; `expiresAt` is ms since the epoch. */
  put(id: string, record: T, expiresAt: number): Promise<void>;
  /** Removes the record; removing an absent record is not an error. */
  delete(id: string): Promise<void>;
  /** Removes expired (and unreadable) records; returns how many. */
  sweep(): Promise<number>;
}
