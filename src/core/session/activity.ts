// The idle timeout (login.cookieExpiration.inactivityTimeout): a session
// unused for longer than it needs a new sign-in. Each instance knows when it
// last served a session; the time is shared with the other instances through
// the token store, coarsely (at most once a minute per session and instance),
// so that a request costs no store write. The store is read only when this
// instance's own knowledge would make the session idle (after a pause, or a
// session served elsewhere until now). See docs/configuration.md.
import { LRUCache } from 'lru-cache';

import type { Logger } from '../../logging.js';
import { StoreUnavailableError, type TokenStore } from '../token-store/token-store.js';
import type { SessionRecord } from './record.js';

/** What the store keeps for one session: when it was last used (ms since the epoch), to the minute. */
export interface LastSeen {
  readonly at: number;
}

/** The longest a session's last use goes unwritten: other instances see it at most this late. */
export const LAST_SEEN_WRITE_INTERVAL_MS = 60_000;

/** How many sessions an instance remembers the last use of (one that is forgotten is read from the store again). */
const REMEMBERED_SESSIONS = 10_000;

interface Seen {
  /** The last use this instance knows of. */
  seen: number;
  /** The last use the store holds, as far as this instance knows. */
  written: number;
}

export class SessionActivity {
  readonly #known = new LRUCache<string, Seen>({ max: REMEMBERED_SESSIONS });
  /** Store reads in flight, shared by the requests of one session. */
  readonly #reading = new Map<string, Promise<number>>();
  /** Records found idle: what `isIdle` answers (records are immutable; a session found idle stays so). */
  readonly #idle = new WeakSet<SessionRecord>();
  /** How long a use goes unwritten: a minute, or a quarter of a short timeout, so no instance misjudges a session in use. */
  readonly #writeIntervalMs: number;

  constructor(
    readonly idleTimeoutMs: number,
    private readonly store: TokenStore<LastSeen>,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.#writeIntervalMs = Math.min(LAST_SEEN_WRITE_INTERVAL_MS, Math.floor(idleTimeoutMs / 4));
  }

  /**
   * Takes this request as a use of the session `record` (stored under `id`), unless the session has
   * been idle too long: `isIdle(record)` then says so, and the use is not counted. A store that
   * cannot be read rejects (StoreUnavailableError: the request fails closed).
   */
  async use(id: string, record: SessionRecord): Promise<void> {
    if (this.#idle.has(record)) return;
    const now = this.now();
    let known = this.#known.get(id);
    if (known === undefined || now - known.seen > this.idleTimeoutMs) {
      const written = await this.#lastWritten(id, record);
      const seen = Math.max(known?.seen ?? 0, written, record.createdAt);
      known = { seen, written };
      if (now - seen > this.idleTimeoutMs) {
        this.#idle.add(record);
        this.#known.delete(id);
        return;
      }
      this.#known.set(id, known);
    }
    known.seen = Math.max(known.seen, now);
    if (now - known.written >= this.#writeIntervalMs) await this.#write(id, known, now);
  }

  /** Whether `use` found this session idle for longer than the timeout. */
  isIdle(record: SessionRecord): boolean {
    return this.#idle.has(record);
  }

  /** A session signed in (its first use) or ended: nothing is remembered of an id before it. */
  forget(id: string): void {
    this.#known.delete(id);
  }

  /** The last use the store holds (0: none; a session is then as old as its sign-in). */
  #lastWritten(id: string, record: SessionRecord): Promise<number> {
    const running = this.#reading.get(id);
    if (running !== undefined) return running;
    const read = this.store
      .get(id)
      .then((stored) => (typeof stored?.at === 'number' ? stored.at : record.createdAt))
      .finally(() => this.#reading.delete(id));
    this.#reading.set(id, read);
    return read;
  }

  /**
   * The use, for the other instances. It expires with the idle timeout: past it the session is idle
   * anyway, and an absent time means the sign-in's, which is older still. A store that fails to
   * take it only makes the session seem idle earlier elsewhere: the request goes on, and the write
   * is tried again an interval later.
   */
  async #write(id: string, known: Seen, now: number): Promise<void> {
    const previous = known.written;
    known.written = now;
    try {
      await this.store.put(id, { at: now }, now + this.idleTimeoutMs);
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        known.written = previous;
        throw error;
      }
      this.logger.warn({ reason: (error as Error).message }, 'session last use not stored');
    }
  }
}
