/**
 * Where server-side session records live (docs/architecture.md#sessions-and-the-token-store). The
 * interface is all callers see; a shared store for several instances plugs
 * in behind it and must pass the same conformance suite
 * (test/core/token-store/conformance.ts).
 *
 * Records are plain JSON values. A record past its expiry, or one that
 * cannot be read back intact, is absent.
 */
export interface TokenStore<T> {
  get(id: string): Promise<T | undefined>;
  /**
   * Creates or replaces the record; `expiresAt` is ms since the epoch, a finite number (anything
   * else rejects with a RangeError and leaves what was stored as it was: a record whose expiry JSON
   * cannot hold would be written as one that no read accepts).
   */
  put(id: string, record: T, expiresAt: number): Promise<void>;
  /** Removes the record; removing an absent record is not an error. */
  delete(id: string): Promise<void>;
  /**
   * Removes expired (and unreadable) records; returns how many. A store that offers `exclusive`
   * leaves a record whose id is in a section to a later sweep, and does not wait for it: the work
   * in it (a session's refresh) may be about to write the record back, renewed.
   */
  sweep(): Promise<number>;
  /**
   * Optional beyond get / put / delete / sweep, and what a store
   * shared by several instances should offer: runs `work` while no other
   * caller, in this process or in any other instance sharing the store, runs
   * work for the same id; resolves or rejects as `work` does. Session refresh
   * takes turns through it: two instances redeeming one rotating refresh token
   * at once would have the second refused, and many providers then revoke the
   * whole grant. A holder that vanished without releasing (a crashed
   * instance) must not block the id for longer than a provider call can take.
   * Without it, a session's refresh and logout take turns within one process only
   * (token-store/turns.ts).
   */
  exclusive?<R>(id: string, work: () => Promise<R>): Promise<R>;
  /** Offered by a store shared by several instances that can tell each of the others' changes (the Redis store). */
  readonly changes?: StoreChanges;
}

/** `expiresAt` as put takes it; throws the RangeError put rejects with. */
export function checkedExpiry(expiresAt: number): number {
  if (!Number.isFinite(expiresAt))
    throw new RangeError(`a token store record's expiry must be a finite time, not ${expiresAt}`);
  return expiresAt;
}

/**
 * The store cannot be reached or did not answer in time (a shared store's server is down, slow or
 * restarting). Nothing is known about the record: callers fail closed (a protected request answers
 * 503 with Retry-After) and never take it for absent.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/**
 * What a store shared by several instances tells each of them about the others' writes, so that
 * each can cache what it read and still honour a logout made elsewhere at once.
 */
export interface StoreChanges {
  /** The name under which the store keeps `id`, as the notices carry it. */
  nameOf(id: string): string;
  /**
   * `listener` hears the name of every record another instance wrote or removed, and `undefined`
   * when notices may have been missed (the link to the store was lost, or is back): everything
   * cached from the store must then be read again.
   */
  onChange(listener: (name: string | undefined) => void): void;
  /** Whether notices are arriving now. While they are not, nothing read from the store may be cached. */
  readonly watching: boolean;
}
