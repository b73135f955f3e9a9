import { checkedExpiry, type TokenStore } from './token-store.js';

/** A single-process store, for tests and one-instance deployments that need no persistence. */
export class MemoryTokenStore<T> implements TokenStore<T> {
  readonly #records = new Map<string, { json: string; expiresAt: number }>();
  /** Per id, the end of the last exclusive section queued: each waits for the one before it. */
  readonly #queues = new Map<string, Promise<void>>();

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
      if (entry.expiresAt <= now) {
        this.#records.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async exclusive<R>(id: string, work: () => Promise<R>): Promise<R> {
    const before = this.#queues.get(id) ?? Promise.resolve();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const end = before.then(() => released);
    this.#queues.set(id, end);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (this.#queues.get(id) === end) this.#queues.delete(id);
    }
  }
}
