/** Longest X-Forge-Delivery value remembered; longer ids are not de-duplicated. */
export const MAX_DELIVERY_ID_LENGTH = 256;

interface Entry<T> {
  readonly bodyDigest: string;
  readonly outcome: Promise<T>;
  readonly expiresAt: number;
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
 * maximum count (oldest forgotten first). The outcome is recorded before the
 * handler runs, so concurrent duplicates share one run.
 */
export class DeliveryLog<T> implements DeliveryRegistry<T> {
  readonly #entries = new Map<string, Entry<T>>();

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  async run(id: string, bodyDigest: string, handler: () => T | Promise<T>): Promise<DeliveryOutcome<T>> {
    this.#sweep();
    const existing = this.#entries.get(id);
    if (existing !== undefined) {
      // Same id, other bytes: not a redelivery. Answering with the first result would hide it.
      if (existing.bodyDigest !== bodyDigest) return { kind: 'conflict' };
      return { kind: 'duplicate', value: await existing.outcome };
    }
    const outcome = Promise.resolve().then(handler);
    this.#entries.set(id, { bodyDigest, outcome, expiresAt: this.now() + this.windowMs });
    while (this.#entries.size > this.maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
    try {
      return { kind: 'first', value: await outcome };
    } catch (error) {
      // A failed run is not remembered: the forge's retry must run again.
      if (this.#entries.get(id)?.outcome === outcome) this.#entries.delete(id);
      throw error;
    }
  }

  /** Entries are in insertion order with one window, so expired ones are at the front. */
  #sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.#entries) {
      if (entry.expiresAt > now) break;
      this.#entries.delete(id);
    }
  }
}
