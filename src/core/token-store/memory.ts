import { checkedExpiry, type TokenStore } from './token-store.js';
import { Turns } from './turns.js';

/** A single-process store, for tests and one-instance deployments that need no persistence. */
export class MemoryTokenStore<T> implements TokenStore<T> {
  readonly #records = new Map<string, { json: string; expiresAt: number }>();
  readonly #turns = new Turns();

  constructor(private readonly now: () => number = Date.now) {}

  async get(id: string): Promise<T | undefined> {
    const entry = this.#records.get(id);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.#records.delete(id);
      return undefined;
    }
    // Stored as JSON, like every other store: callers never share mutable state with it.
    return JSON.parse(entry.json) as T;
  }

  async put(id: string, record: T, expiresAt: number): Promise<void> {
    this.#records.set(id, { json: JSON.stringify(record), expiresAt: checkedExpiry(expiresAt) });
  }

  async delete(id: string): Promise<void> {
    this.#records.delete(id);
  }

  async sweep(): Promise<number> {
    const now = this.now();
    let removed = 0;
    for (const [id, entry] of this.#records) {
      if (entry.expiresAt <= now && !this.#turns.busy(id)) {
        this.#records.delete(id);
        removed++;
      }
    }
    return removed;
  }

  exclusive<R>(id: string, work: () => Promise<R>): Promise<R> {
    return this.#turns.run(id, work);
  }
}
