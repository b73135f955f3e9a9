// Delivery ids remembered in Redis, so that a delivery one instance has handled
// is a duplicate on every other (GATEHOUSE_REDIS_URL). A delivery is claimed
// before its handler runs (`SET NX`, with a short lease: an instance that dies
// mid-delivery does not hold the id for the whole window), and its answer is
// kept for the window once it ran; a failed run gives the id back, so the
// sender's retry runs again. Ids are kept as SHA-256 digests (they are
// caller-supplied), each key with a TTL.
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';

import { DELETE_IF_HELD, type RedisLink } from '../core/token-store/redis-link.js';
import { StoreUnavailableError } from '../core/token-store/token-store.js';
import type { DeliveryOutcome, DeliveryRegistry } from './deliveries.js';

/** How long a claim holds before its answer is kept: far longer than a handler runs. */
const CLAIM_LEASE_MS = 30_000;
/** How long a redelivery waits for the answer of a run under way on another instance (then 503). */
const WAIT_FOR_RUN_MS = 10_000;
const POLL_MAX_MS = 100;

/** What a delivery's key holds: the body's digest, the claim's token, and the answer once it ran. */
interface Kept<T> {
  readonly digest: string;
  readonly claim: string;
  readonly value?: T;
}

export class SharedDeliveryLog<T> implements DeliveryRegistry<T> {
  /** Runs under way in this process, by id: concurrent duplicates here share one. */
  readonly #running = new Map<string, { digest: string; value: Promise<T> }>();

  constructor(
    private readonly link: RedisLink,
    private readonly windowMs: number,
  ) {}

  #key(id: string): string {
    return `${this.link.prefix}delivery:${createHash('sha256').update(id).digest('base64url')}`;
  }

  async run(id: string, bodyDigest: string, handler: () => T | Promise<T>): Promise<DeliveryOutcome<T>> {
    const here = this.#running.get(id);
    if (here !== undefined)
      return here.digest === bodyDigest ? { kind: 'duplicate', value: await here.value } : { kind: 'conflict' };
    const key = this.#key(id);
    const deadline = Date.now() + WAIT_FOR_RUN_MS;
    for (let wait = 5; ; wait = Math.min(wait * 2, POLL_MAX_MS)) {
      const claim = JSON.stringify({ digest: bodyDigest, claim: randomUUID() } satisfies Kept<T>);
      const claimed = await this.link.run((client) =>
        client.set(key, claim, { condition: 'NX', expiration: { type: 'PX', value: CLAIM_LEASE_MS } }),
      );
      if (claimed === 'OK')
        return { kind: 'first', value: await this.#runClaimed(id, key, claim, bodyDigest, handler) };
      const text = await this.link.run((client) => client.get(key));
      if (text !== null) {
        const kept = JSON.parse(text) as Kept<T>;
        if (kept.digest !== bodyDigest) return { kind: 'conflict' };
        if ('value' in kept) return { kind: 'duplicate', value: kept.value as T };
      }
      // Claimed by a run under way elsewhere (or given back just now): wait for its answer, or claim it.
      if (Date.now() > deadline)
        throw new StoreUnavailableError(
          `delivery ${id.slice(0, 64)} has been under way on another instance for over ${WAIT_FOR_RUN_MS} ms`,
        );
      await delay(wait);
    }
  }

  async #runClaimed(
    id: string,
    key: string,
    claim: string,
    bodyDigest: string,
    handler: () => T | Promise<T>,
  ): Promise<T> {
    const value = Promise.resolve().then(handler);
    this.#running.set(id, { digest: bodyDigest, value });
    try {
      const answer = await value.catch(async (error: unknown) => {
        // A failed run is not remembered: the sender's retry must run again.
        await this.link.script(DELETE_IF_HELD, [key], [claim]).catch(() => undefined);
        throw error;
      });
      const kept: Kept<T> = { ...(JSON.parse(claim) as Kept<T>), value: answer };
      await this.link.run((client) =>
        client.set(key, JSON.stringify(kept), { condition: 'XX', expiration: { type: 'PX', value: this.windowMs } }),
      );
      return answer;
    } finally {
      this.#running.delete(id);
    }
  }
}
