import { LRUCache } from 'lru-cache';

/** Longest X-Forge-Delivery value remembered; longer ids are not de-duplicated. */
export const MAX_DELIVERY_ID_LENGTH = 256;

interface Entry<T> {
  readonly bodyDigest: string;
  readonly outcome: Promise<T>;
}

export type DeliveryOutcome<T> =
  | { readonly kind: 'first'; readonly value: T }
  | { readonly kind: 'duplicate'; readonly value: T }
  | { readonly kind: 'conflict' };

/** Where deliveries are remembered: this process (DeliveryLog), or Redis, shared by every instance (SharedDeliveryLog). */
export interface DeliveryRegistry<T> {
  /**
   * Runs `handler` for a delivery seen for the first time; a redelivery (same id, same digest) gets
   * the first run's answer without running it again; the same id with another digest is a conflict.
   */
  run(id: string, bodyDigest: string, handler: () => T | Promise<T>): Promise<DeliveryOutcome<T>>;
}

/**
 * Remembers recent deliveries by id so a redelivery runs its handler once and
 * gets the first answer again. Bounded twice: by a time window and by a
 * maximum count (least recently used forgotten first; lru-cache). The outcome is recorded before the
 * handler runs, so concurrent duplicates share one run.
 */
export class DeliveryLog<T> implements DeliveryRegistry<T> {
  // The window is each entry's ttl (checked on every get against `now`); past maxEntries the least
  // recently used go first.
  readonly #entries: LRUCache<string, Entry<T>>;

  constructor(windowMs: number, maxEntries: number, now: () => number = Date.now) {
    // lru-cache counts an entry stale once more than ttl ms have passed; here it is gone at the window's end.
    this.#entries = new LRUCache<string, Entry<T>>({
      max: maxEntries,
      ttl: Math.max(1, windowMs - 1),
      ttlResolution: 0,
      perf: { now },
    });
  }

  get size(): number {
    this.#entries.purgeStale();
    return this.#entries.size;
  }

  async run(id: string, bodyDigest: string, handler: () => T | Promise<T>): Promise<DeliveryOutcome<T>> {
    const existing = this.#entries.get(id);
    if (existing !== undefined) {
      // Same id, other bytes: not a redelivery. Answering with the first result would hide it.
      if (existing.bodyDigest !== bodyDigest) return { kind: 'conflict' };
      return { kind: 'duplicate', value: await existing.outcome };
    }
    const outcome = Promise.resolve().then(handler);
    this.#entries.set(id, { bodyDigest, outcome });
    try {
      return { kind: 'first', value: await outcome };
    } catch (error) {
      // A failed run is not remembered: the forge's retry must run again.
      if (this.#entries.peek(id)?.outcome === outcome) this.#entries.delete(id);
      throw error;
    }
  }
}
